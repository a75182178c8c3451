// The shape of the text an owner supplies to an input task, as its answer
// operation declares it (the catalogue's supplied_text: a JSON Schema of a
// string with a pattern, lengths, a description in plain words and
// examples; connectors.TextShape). The card fits the answer box to it (one
// line for a short pattern-shaped answer, a numeric keyboard for digits)
// and checks the text against it before the wallet is asked: the service
// cannot, since the text is sealed to the task's reply key. The check reads
// the shape as the service's validator does (the pattern searched for in
// the text, lengths in characters); a shape the page cannot read is not
// checked at all, and the answer run still judges whatever it gets.

import * as api from "./api";

/** A shape of supplied text as the page reads it. */
export interface TextShape {
  /** What is expected, in plain words ("a whole number in digits, such as 7"). */
  readonly description: string;
  readonly pattern: RegExp | null;
  readonly minLength: number | null;
  readonly maxLength: number | null;
  /** The answer is short and one line: an <input>, not a text area. */
  readonly oneLine: boolean;
  /** The pattern is digits (white space around them allowed): a numeric keyboard. */
  readonly numeric: boolean;
}

/** A short answer: at most this many characters fits one line. */
const SHORT = 100;

/** A pattern of digits: ^[0-9]+$ or ^\d{1,4}$, with [ \t\r\n]* around them or not. */
const DIGITS = /^\^(?:\[(?: |\\[trn])+\]\*)?(?:\[0-9\]|\\d)(?:\+|\{\d+(?:,\d*)?\})(?:\[(?: |\\[trn])+\]\*)?\$$/;

const length = (s: string) => [...s].length;

const isLength = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/**
 * Reads a catalogue's supplied_text; null when there is none or it does
 * not read here (its pattern does not compile in this browser, say): the
 * page then checks nothing.
 */
export function readTextShape(raw: unknown): TextShape | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return null;
  }
  const s = raw as { type?: unknown; pattern?: unknown; minLength?: unknown; maxLength?: unknown; description?: unknown; examples?: unknown };
  if (s.type !== "string" || typeof s.description !== "string" || s.description.trim() === "") {
    return null;
  }
  if ((s.pattern !== undefined && typeof s.pattern !== "string") || (s.minLength !== undefined && !isLength(s.minLength)) || (s.maxLength !== undefined && !isLength(s.maxLength))) {
    return null;
  }
  let pattern: RegExp | null = null;
  if (typeof s.pattern === "string" && s.pattern !== "") {
    try {
      pattern = new RegExp(s.pattern, "u");
    } catch {
      return null;
    }
  }
  const maxLength = isLength(s.maxLength) ? s.maxLength : null;
  // An example with a line break inside it says the answer has lines.
  const lines = Array.isArray(s.examples) && s.examples.some((e) => typeof e === "string" && /[\r\n]/.test(e.trim()));
  return {
    description: s.description,
    pattern,
    minLength: isLength(s.minLength) ? s.minLength : null,
    maxLength,
    oneLine: !lines && (pattern !== null || (maxLength !== null && maxLength <= SHORT)),
    numeric: typeof s.pattern === "string" && DIGITS.test(s.pattern),
  };
}

/** Whether text fits the shape, as the service's validator reads it. */
export function fitsShape(shape: TextShape, text: string): boolean {
  const n = length(text);
  if ((shape.minLength !== null && n < shape.minLength) || (shape.maxLength !== null && n > shape.maxLength)) {
    return false;
  }
  return shape.pattern === null || shape.pattern.test(text);
}

/** The service's public catalogue (GET /connectors), as the page reads it. */
export type Catalogue = api.CatalogueAnswer;

/** The catalogue, fetched once while it answers (it changes only when the service does). */
let catalogue: Promise<Catalogue> | null = null;

/** How long a card waits for the catalogue before it draws a box that checks nothing. */
const WAIT_MS = 3000;

/** The catalogue, fetched once for the page; null when it cannot be fetched (within WAIT_MS). */
export async function connectorCatalogue(): Promise<Catalogue | null> {
  const cat = (catalogue ??= api.catalogue());
  try {
    return await Promise.race([cat, new Promise<null>((resolve) => window.setTimeout(() => resolve(null), WAIT_MS))]);
  } catch {
    if (catalogue === cat) {
      catalogue = null;
    }
    return null;
  }
}

/**
 * The shape the answer operation of a task made by build declares of
 * supplied text, from the service's public catalogue; null when it declares
 * none, the catalogue no longer lists that build, or it cannot be fetched
 * (within WAIT_MS).
 */
export async function shapeFor(build: string, operation: string): Promise<TextShape | null> {
  const c = await connectorCatalogue();
  if (!c) {
    return null;
  }
  const conn = (c.connectors ?? []).find((x) => x.build === build);
  const op = (conn?.operations ?? []).find((o) => o.name === operation && o.kind === "answer");
  return op ? readTextShape(op.supplied_text) : null;
}
