// Live checks in the browser: the same rules file (qc/rules/live_checks.json, embedded in the
// page) and the same semantics as qc/livechecks.py, so both sides return the same warning codes
// in the same order. A browser test asserts that on the shared test vectors.

// The rule file's tokenization (qc.livechecks.tokenize): NFC, any apostrophe as "'", runs of
// letters and digits of any script joined by inner apostrophes, each lower-cased; a negative
// contraction is its two words ("don't" is do, not; "can't" is can, not), any other word loses
// its clitic ending ("Pinhead's" is pinhead, "they're" is they). words() also says which were
// written in capitals (tokenization.capitals: "IT" in "the IT department" is an acronym).
function wordTokens(tokenization, lower) {
  const { irregular, negation_suffix: suffix, negation } = tokenization.contractions;
  if (Object.hasOwn(irregular, lower)) return irregular[lower];
  if (lower.endsWith(suffix) && lower.length > suffix.length) {
    return [lower.slice(0, -suffix.length), negation];
  }
  const clitic = tokenization.clitics.find((ending) => lower.endsWith(ending) && lower.length > ending.length);
  return [clitic ? lower.slice(0, -clitic.length) : lower];
}

function words(rules, text) {
  const tokenization = rules.tokenization;
  let normal = String(text).normalize("NFC");
  for (const apostrophe of tokenization.apostrophes) normal = normal.replaceAll(apostrophe, "'");
  const allCapitals = normal.toUpperCase() === normal;
  const found = [];
  for (const word of normal.match(new RegExp(tokenization.word_pattern.js, "gu")) || []) {
    const lower = word.toLowerCase();
    const letters = (word.match(/\p{L}/gu) || []).length;
    const capitals = !allCapitals && word !== lower && word === word.toUpperCase()
      && letters >= tokenization.capitals.min_letters;
    for (const token of wordTokens(tokenization, lower)) found.push({ token, capitals });
  }
  return found;
}

function tokenize(rules, text) {
  return words(rules, text).map((word) => word.token);
}

function distinct(words) {
  return [...new Set(words)];
}

function containsPhrase(rules, tokens, phrase) {
  const phraseTokens = tokenize(rules, phrase);
  const width = phraseTokens.length;
  if (width === 0) return false;
  for (let i = 0; i + width <= tokens.length; i++) {
    if (phraseTokens.every((token, j) => tokens[i + j] === token)) return true;
  }
  return false;
}

function byCode(rules, kind) {
  return Object.fromEntries(rules[kind].map((rule) => [rule.code, rule]));
}

function ordered(rules, kind, found) {
  return rules[kind].filter((rule) => found.has(rule.code)).map((rule) => found.get(rule.code));
}

function warning(code, message) {
  return { code, message };
}

export function checkRewrite(rules, question, rewrite, contextWords = null) {
  const r = byCode(rules, "rewrite");
  const rewriteWords = words(rules, rewrite);
  const tokens = rewriteWords.map((word) => word.token);
  const questionTokens = tokenize(rules, question);
  const found = new Map();

  let rule = r.rewrite_too_short;
  if (tokens.length < rule.min_tokens
      || tokens.length < rule.min_ratio_to_question * questionTokens.length) {
    found.set(rule.code, warning(rule.code, rule.message));
  }
  rule = r.rewrite_pronoun_left;
  const pronouns = new Set(rule.words);
  const foundPronouns = distinct(rewriteWords
    .filter((word) => pronouns.has(word.token) && !word.capitals).map((word) => word.token));
  if (foundPronouns.length) {
    found.set(rule.code, warning(rule.code, rule.message.replaceAll("{words}", foundPronouns.join(", "))));
  }
  rule = r.rewrite_ambiguous_words;
  const phrases = rule.phrases.filter((p) => containsPhrase(rules, tokens, p));
  if (phrases.length) {
    found.set(rule.code, warning(rule.code, rule.message.replaceAll("{words}", phrases.join(", "))));
  }
  rule = r.rewrite_other_without_phrase;
  const triggered = rule.trigger_words.some((w) => tokens.includes(w) || questionTokens.includes(w));
  if (triggered && !rule.allowed_phrases.some((p) => containsPhrase(rules, tokens, p))) {
    found.set(rule.code, warning(rule.code, rule.message));
  }
  rule = r.rewrite_new_words;
  if (contextWords !== null && contextWords !== undefined) {
    const known = new Set([...questionTokens, ...rules.stopwords]);
    for (const text of contextWords) tokenize(rules, text).forEach((t) => known.add(t));
    for (const phrase of r.rewrite_other_without_phrase.allowed_phrases) {
      tokenize(rules, phrase).forEach((t) => known.add(t));
    }
    const newWords = distinct(tokens.filter((t) => !known.has(t)));
    if (newWords.length) {
      found.set(rule.code, warning(rule.code, rule.message.replaceAll("{words}", newWords.join(", "))));
    }
  }
  return ordered(rules, "rewrite", found);
}

export function sluiceWhWord(rules, q2) {
  const tokens = tokenize(rules, q2);
  const wh = tokens.find((t) => rules.wh_words.includes(t));
  return wh !== undefined ? wh : (tokens[0] || "");
}

export function checkSluice(rules, q1, a1, q2, answer) {
  const r = byCode(rules, "sluice");
  const tokens = tokenize(rules, answer);
  const found = new Map();
  let rule = r.sluice_wrong_start;
  const wh = sluiceWhWord(rules, q2);
  if (wh && (!tokens.length || tokens[0] !== wh)) {
    found.set(rule.code, warning(rule.code, rule.message.replaceAll("{wh_word}", wh)));
  }
  rule = r.sluice_too_short;
  if (tokens.length < rule.min_tokens) found.set(rule.code, warning(rule.code, rule.message));
  rule = r.sluice_copies_q1;
  const q1Tokens = tokenize(rules, q1);
  if (tokens.length && tokens.length === q1Tokens.length && tokens.every((t, i) => t === q1Tokens[i])) {
    found.set(rule.code, warning(rule.code, rule.message));
  }
  return ordered(rules, "sluice", found);
}

export function splitCoverage(rules, complexSentence, simpleSentences) {
  const stop = new Set(rules.stopwords);
  const wanted = distinct(tokenize(rules, complexSentence).filter((t) => !stop.has(t)));
  if (!wanted.length) return 1.0;
  const used = new Set();
  for (const sentence of simpleSentences) tokenize(rules, sentence).forEach((t) => used.add(t));
  return wanted.filter((w) => used.has(w)).length / wanted.length;
}

export function checkSplit(rules, complexSentence, simpleSentences) {
  const r = byCode(rules, "split_rephrase");
  const sentences = simpleSentences.filter((s) => tokenize(rules, s).length).map((s) => s.trim());
  const found = new Map();
  let rule = r.split_too_few_sentences;
  if (sentences.length < rule.min_sentences) found.set(rule.code, warning(rule.code, rule.message));
  rule = r.split_not_a_sentence;
  // The first character's Unicode general category (any script's capitals and digits).
  const start = new RegExp(`^[${rule.start_categories.map((c) => `\\p{${c}}`).join("")}]`, "u");
  const end = new RegExp(rule.end_pattern, "u");
  const bad = [];
  sentences.forEach((s, i) => {
    if (!(start.test(s) && end.test(s))) bad.push(String(i + 1));
  });
  if (bad.length) found.set(rule.code, warning(rule.code, rule.message.replaceAll("{positions}", bad.join(", "))));
  rule = r.split_copies_input;
  const complexTokens = tokenize(rules, complexSentence);
  const same = (a, b) => a.length === b.length && a.every((t, i) => t === b[i]);
  if (sentences.some((s) => same(tokenize(rules, s), complexTokens))) {
    found.set(rule.code, warning(rule.code, rule.message));
  }
  rule = r.split_low_coverage;
  const coverage = splitCoverage(rules, complexSentence, sentences);
  if (coverage < rule.min_coverage) {
    const percent = String(Math.floor(coverage * 100));
    found.set(rule.code, warning(rule.code, rule.message.replaceAll("{coverage_percent}", percent)));
  }
  return ordered(rules, "split_rephrase", found);
}

/** Dispatch with the payload shape of qc.livechecks.check and the cases file. */
export function check(rules, kind, payload) {
  if (kind === "rewrite") {
    return checkRewrite(rules, payload.question, payload.rewrite, payload.context_words ?? null);
  }
  if (kind === "sluice") return checkSluice(rules, payload.q1, payload.a1, payload.q2, payload.answer);
  if (kind === "split_rephrase") return checkSplit(rules, payload.complex_sentence, payload.simple_sentences);
  if (kind === "plausibility") return [];
  throw new Error(`unknown live-check kind: ${kind}`);
}
