// What the page says in words, in one place: sizes, times, countdowns,
// states, failure reasons, kinds of task, the policy's modes, and the
// precise (technical) words each plain one stands for, which the page keeps
// one click away. Nothing here reaches the service: sentences that are
// signed are built in sign.ts.

/**
 * A file name safe to save under: letters, digits, dot, dash, underscore and
 * space kept, anything else "_", no leading dot or space, at most 200.
 */
export function safeFileName(name: string): string {
  let s = name.replace(/[^\p{L}\p{N}._ -]/gu, "_").replace(/^[. ]+/, "").replace(/[. ]+$/, "");
  s = [...s].slice(0, 200).join("");
  return s === "" ? "file" : s;
}

/** A sentence time: UTC, whole seconds, YYYY-MM-DDTHH:MM:SSZ. */
export function sentenceTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A time as a person reads UTC: "2026-12-02 13:43:07 UTC". */
export function utcWords(ms: number): string {
  return sentenceTime(ms).replace("T", " ").replace("Z", " UTC");
}

/** A time in this device's own zone, to the second: "2 Dec 2026, 14:43:07". */
export function localWords(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** A time of day in this device's own zone, to the second: "14:43:07". */
export function clockWords(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/**
 * How far t is from now, roughly, as a person says it: "in 23 h",
 * "in 5 min", "2 min ago", "3 days ago", "just now".
 */
export function relativeWords(now: number, t: number): string {
  const d = Math.round((t - now) / 1000);
  const a = Math.abs(d);
  if (a < 45) {
    return d >= 0 ? "in a few seconds" : "just now";
  }
  let n: string;
  if (a < 3600) {
    n = `${Math.max(1, Math.round(a / 60))} min`;
  } else if (a < 48 * 3600) {
    n = `${Math.round(a / 3600)} h`;
  } else {
    n = `${Math.round(a / 86400)} days`;
  }
  return d >= 0 ? `in ${n}` : `${n} ago`;
}

/** A size in bytes with its unit, as the terminal writes it. */
export function byteCount(n: number): string {
  if (n === 1) {
    return "1 byte";
  }
  if (n < 10_000) {
    return `${n} bytes`;
  }
  if (n < 10_000_000) {
    return `${(n / 1000).toFixed(1)} kB`;
  }
  return `${(n / 1_000_000).toFixed(1)} MB`;
}

/** How long is left until t (ms): hours and minutes, or minutes and seconds in the last hour. */
export function countdown(now: number, t: number): string {
  let d = Math.floor((t - now) / 1000);
  if (d <= 0) {
    return "expired by this device's clock";
  }
  const h = Math.floor(d / 3600);
  d -= h * 3600;
  const m = Math.floor(d / 60);
  d -= m * 60;
  if (h) {
    return `in ${h} h ${m} min`;
  }
  return m ? `in ${m} min ${d} s` : `in ${d} s`;
}

/** What a task's state means, in plain words: how it ended, or that it is being carried out. */
export function stateWords(state: string): string {
  return state === "approved" || state === "answering" ? "Approved, being carried out" : endedWord(state);
}

/**
 * How a task or a write ended, in the owner's words, from its state and
 * failure reason alone: for ends the service, not the connector, decides
 * (the owner's no, a cancel, an expiry, the platform's failures) and for
 * ends the connector told nothing of. Word for word the Go device's
 * device.Ending, so the terminal inbox says the same.
 */
export function endingWords(state: string, reason = ""): string {
  switch (state) {
    case "done":
      return "Done.";
    case "rejected":
      return "You rejected it. Nothing was written.";
    case "cancelled":
      return "Cancelled before it was answered. Nothing was written.";
    case "expired":
      return "It expired before it was answered. Nothing was written.";
    case "void":
      return "Not carried out: the project changed (its policy, its connector or its agents) after the task was made, or the approval did not match what was shown. Nothing was written.";
    case "failed":
      break;
    default:
      return `It is ${state}.`;
  }
  switch (reason) {
    case "run_unfinished":
      return "The write began but did not report back: it may or may not have happened.";
    case "run_not_started":
      return "Approved, but the write did not start within 30 minutes. Nothing was written.";
    case "preparer_key_unavailable":
      return "Approved, but the agent no longer has a key, so nothing ran. Nothing was written.";
    case "operation_unknown":
      return "Approved, but the connector no longer has the operation that carries it out. Nothing was written.";
    case "operation_priced":
      return "Approved, but the operation that carries it out has a price, which an answer may not. Nothing was written.";
    case "operation_limit_reached":
      return "Approved, but the operation's limit was reached. Nothing was written.";
    case "queue_unavailable":
      return "Approved, but the write could not be queued. Nothing was written.";
  }
  const code = /^run_refused:([a-z0-9_]{1,64})$/.exec(reason)?.[1];
  if (code) {
    return `The write failed after your approval (${code}); whether it happened is not known.`;
  }
  return reason ? `It failed (${reason}).` : "It failed.";
}

/**
 * The word an entry of the history leads with: how it ended (a failure
 * said as one).
 */
export function endedWord(state: string): string {
  switch (state) {
    case "done":
      return "Done";
    case "failed":
      return "Failed";
    case "rejected":
      return "Rejected by you";
    case "cancelled":
      return "Cancelled";
    case "expired":
      return "Expired unanswered";
    case "void":
      return "Not carried out";
  }
  return state;
}

/** What a task of a kind asks of the owner (the precise word is the kind itself). */
export function kindWords(kind: string): string {
  switch (kind) {
    case "confirm":
      return "asks yes or no";
    case "input":
      return "asks for your answer";
    case "notice":
      return "tells you something";
  }
  return kind;
}

/** A connector's build ("probe@1.0.0") as a person says it. */
export function buildWords(build: string): string {
  const at = build.lastIndexOf("@");
  return at > 0 ? `the ${build.slice(0, at)} connector, version ${build.slice(at + 1)}` : build;
}

/** A price in micro-USD, in dollars. */
export function price(micro: number): string {
  if (!micro) {
    return "free";
  }
  return "$" + (micro / 1_000_000).toFixed(6).replace(/0+$/, "").replace(/\.$/, "");
}

/** What a project's policy mode means for the owner, in plain words. */
export function policyWords(mode: string, sentence: string | undefined): string {
  switch (mode) {
    case "ok":
      return "The policy is in force.";
    case "unreadable":
      return `The policy cannot be read: ${sentence || "it does not read"}. Every write is refused until it is fixed.`;
    case "broken":
      return `The policy cannot be applied: ${sentence || "a rule cannot apply"}. Every write is refused until it is fixed.`;
  }
  return `The policy is ${mode}${sentence ? ": " + sentence : ""}.`;
}

/** The page's own names for what the contract calls by technical names. */
export const WORDS = {
  /** The envelope's exact bytes: the contract's "RAW form". */
  rawForm: "Exactly what you sign",
  rawFormPrecise: "RAW form: the envelope exactly as decrypted on this device. Its SHA-256 is the task hash your approval signs.",
  /** The agent's call bytes: the contract's "RAW request". */
  rawRequest: "The agent's request, exactly",
  rawRequestPrecise: "RAW request: the agent's call exactly as decrypted on this device, byte for byte. The receipt's input hash covers these bytes.",
  receiptChecking: "Checking that the service's own run made this task…",
  receiptOK: "Checked: the service's own run made this task, for this request, unchanged.",
  receiptBad: (why: string) => `Not checked: ${why}. Approve stays off: this task may not come from the service.`,
  receiptPrecise: (run: string, build: string) => `Receipt verified: run ${run} of ${build} made this task, for this request and this hash.`,
  agentMark: "written by the agent",
  agentMarkNote: "Marked agent: the agent's own words, not the connector's.",
  longTextNote: "Shown as the plain text that will be sent: nothing in it is formatted or followed.",
  noFiles: "No files.",
  /** Above a task's summary (SPEC §8 display.summary), the connector's line of what approving does. */
  summaryLabel: "If you approve, it will",
  answerSent: "Sent to the agent exactly as typed, sealed on this device.",
  /** The answer box's hint: what the connector expects of the text (its shape's description). */
  answerHint: (expected: string) => `${expected.charAt(0).toUpperCase()}${expected.slice(1)}. Sent to the agent exactly as typed, sealed on this device.`,
  /** Next to an answer that does not fit what the connector expects. */
  answerExpected: (expected: string) => `Expected: ${expected}.`,
  answerNotSent: "Nothing was signed or sent: the task still waits for you.",
};

/**
 * Field labels a connector writes in its own technical words, with what
 * they mean in plain ones; the connector's label stays one click away.
 */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  "Replaces the file at blob": "Replaces the file as the agent read it",
};

/**
 * Plain words for git's file modes (diff headers), keeping the mode itself.
 */
export function modeWords(mode: string): string {
  switch (mode) {
    case "100644":
      return `a regular file (${mode})`;
    case "100755":
      return `an executable file (${mode})`;
    case "120000":
      return `a symbolic link (${mode})`;
    case "160000":
      return `a submodule (${mode})`;
    case "040000":
      return `a directory (${mode})`;
  }
  return `mode ${mode}`;
}
