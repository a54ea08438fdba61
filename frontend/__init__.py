"""Server-rendered pages: annotator task UIs, MTurk ExternalQuestion pages, staff review."""
