"""Every hand-written SQL statement of the app, with named parameters; README.md says why each
one is not written with the ORM. The modules that run them (services, selectors, auth) import
them from here."""
