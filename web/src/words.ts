// What the page says in words: sizes, times, countdowns, states and
// failure reasons, and the file names it saves under.

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

/** How long is left until t (ms), to the second. */
export function countdown(now: number, t: number): string {
  let d = Math.floor((t - now) / 1000);
  if (d <= 0) {
    return "expired by this device's clock";
  }
  const parts: string[] = [];
  const h = Math.floor(d / 3600);
  d -= h * 3600;
  const m = Math.floor(d / 60);
  d -= m * 60;
  if (h) {
    parts.push(`${h} h`);
  }
  if (h || m) {
    parts.push(`${m} min`);
  }
  parts.push(`${d} s`);
  return "in " + parts.join(" ");
}

/** What a closed state means, in plain words. */
export function stateWords(state: string): string {
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
      return "Void: the project's policy or the connector changed after it was asked";
    case "approved":
    case "answering":
      return "Approved, being carried out";
    default:
      return state;
  }
}

/** Why a task failed (SPEC §3), in plain words. */
export function failureWords(reason: string): string {
  switch (reason) {
    case "preparer_key_unavailable":
      return "The agent's key was no longer available, so the approved write was not made.";
    case "operation_priced":
      return "The write now has a price the approval did not cover, so it was not made.";
    case "operation_unknown":
      return "The connector no longer has that operation, so the write was not made.";
    case "operation_limit_reached":
      return "The operation's limit was reached, so the write was not made.";
    case "queue_unavailable":
      return "The service could not queue the write, so it was not made.";
    case "run_not_started":
      return "The write did not start within 30 minutes of the approval, so it was not made.";
    case "run_unfinished":
      return "The write began but did not report back: it may or may not have happened.";
  }
  if (reason.startsWith("run_refused:")) {
    return `The connector refused the write after your approval (${reason.slice("run_refused:".length)}); its answer to the agent says whether anything was written.`;
  }
  return `It failed (${reason}).`;
}
