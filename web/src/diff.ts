// Unified diffs drawn as a code review draws them: per file, its name and
// what happens to it in words (new, deleted, renamed, its mode changed, a
// binary file), each hunk with its header, every line with its numbers on
// both sides and its change marked by a sign and, for screen readers, a
// word (never by colour alone), long lines wrapped. A text that does not
// read as a unified diff, whole, is not drawn as one (the caller shows it
// as plain text): what the owner reads is never guessed at.

import { el } from "./dom";
import { modeWords } from "./words";

/** One line of a hunk: context, removed, added, or git's "no newline" mark. */
export interface DiffLine {
  kind: " " | "-" | "+" | "\\";
  text: string;
  /** The line's number in the old file (context and removed lines). */
  old?: number;
  /** The line's number in the new file (context and added lines). */
  new?: number;
}

export interface Hunk {
  header: string;
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  lines: DiffLine[];
}

export interface DiffFile {
  /** The old path (a/ stripped), null for a new file. */
  from: string | null;
  /** The new path (b/ stripped), null for a deleted file. */
  to: string | null;
  /** What git's extended headers say, in words. */
  notes: string[];
  binary: boolean;
  hunks: Hunk[];
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;

function path(p: string, prefix: string): string | null {
  // "--- a/x\tdate" carries a date after a tab in some tools.
  const s = p.split("\t")[0] ?? p;
  if (s === "/dev/null") {
    return null;
  }
  return s.startsWith(prefix) ? s.slice(prefix.length) : s;
}

/** The files of a unified diff (git's or plain), or null when text is not one, whole. */
export function parseDiff(text: string): DiffFile[] | null {
  if (text === "") {
    return null;
  }
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") {
    lines.pop();
  }
  const files: DiffFile[] = [];
  let file: DiffFile | null = null;
  let hunk: Hunk | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let oldAt = 0;
  let newAt = 0;
  let inBinaryPatch = false;
  const start = (): DiffFile => {
    const f: DiffFile = { from: null, to: null, notes: [], binary: false, hunks: [] };
    files.push(f);
    return f;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const k = line[0];
      const rest = line.slice(1);
      if (k === " ") {
        hunk.lines.push({ kind: " ", text: rest, old: oldAt++, new: newAt++ });
        oldLeft--;
        newLeft--;
      } else if (k === "-") {
        hunk.lines.push({ kind: "-", text: rest, old: oldAt++ });
        oldLeft--;
      } else if (k === "+") {
        hunk.lines.push({ kind: "+", text: rest, new: newAt++ });
        newLeft--;
      } else if (k === "\\") {
        hunk.lines.push({ kind: "\\", text: rest.trim() });
      } else {
        return null;
      }
      if (oldLeft < 0 || newLeft < 0) {
        return null;
      }
      continue;
    }
    if (hunk && line.startsWith("\\")) {
      hunk.lines.push({ kind: "\\", text: line.slice(1).trim() });
      continue;
    }
    const h = HUNK.exec(line);
    if (h) {
      if (!file) {
        return null;
      }
      const oldCount = h[2] === undefined ? 1 : Number(h[2]);
      const newCount = h[4] === undefined ? 1 : Number(h[4]);
      hunk = { header: line, oldStart: Number(h[1]), oldCount, newStart: Number(h[3]), newCount, lines: [] };
      file.hunks.push(hunk);
      oldLeft = oldCount;
      newLeft = newCount;
      oldAt = oldCount === 0 ? Number(h[1]) + 1 : Number(h[1]);
      newAt = newCount === 0 ? Number(h[3]) + 1 : Number(h[3]);
      inBinaryPatch = false;
      continue;
    }
    hunk = null;
    if (line.startsWith("diff --git ")) {
      file = start();
      inBinaryPatch = false;
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      if (m) {
        file.from = m[1] ?? null;
        file.to = m[2] ?? null;
      }
      continue;
    }
    if (inBinaryPatch) {
      continue;
    }
    if (line.startsWith("--- ") && (lines[i + 1] ?? "").startsWith("+++ ")) {
      // A plain diff's file begins here; after git's header, it continues it.
      if (!file || file.hunks.length > 0 || file.binary) {
        file = start();
      }
      file.from = path(line.slice(4), "a/");
      file.to = path((lines[i + 1] ?? "").slice(4), "b/");
      if (file.from === null && !file.notes.some((n) => n.startsWith("New file"))) {
        file.notes.push("New file.");
      }
      if (file.to === null && !file.notes.some((n) => n.startsWith("Deleted"))) {
        file.notes.push("Deleted file.");
      }
      i++;
      continue;
    }
    if (!file) {
      return null;
    }
    let m: RegExpExecArray | null;
    if ((m = /^old mode (\d+)$/.exec(line)) && (lines[i + 1] ?? "").startsWith("new mode ")) {
      const to = (lines[i + 1] ?? "").slice("new mode ".length);
      file.notes.push(`Its mode changes from ${modeWords(m[1] ?? "")} to ${modeWords(to)}.`);
      i++;
    } else if ((m = /^new file mode (\d+)$/.exec(line))) {
      file.notes.push(`New file: ${modeWords(m[1] ?? "")}.`);
      file.from = null;
    } else if ((m = /^deleted file mode (\d+)$/.exec(line))) {
      file.notes.push(`Deleted: ${modeWords(m[1] ?? "")}.`);
      file.to = null;
    } else if ((m = /^rename from (.*)$/.exec(line))) {
      file.notes.push(`Renamed from ${m[1]}.`);
    } else if ((m = /^copy from (.*)$/.exec(line))) {
      file.notes.push(`Copied from ${m[1]}.`);
    } else if (/^(rename|copy) to /.test(line) || /^(similarity|dissimilarity) index \d+%$/.test(line) || /^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?$/.test(line)) {
      // Said by the notes above, or only git's bookkeeping.
    } else if (/^Binary files .* differ$/.test(line)) {
      file.binary = true;
    } else if (line === "GIT binary patch") {
      file.binary = true;
      inBinaryPatch = true;
    } else {
      return null;
    }
  }
  if (!files.length || (hunk && (oldLeft > 0 || newLeft > 0))) {
    return null;
  }
  for (const f of files) {
    if (!f.hunks.length && !f.binary && !f.notes.length) {
      return null;
    }
  }
  return files;
}

/** The visually hidden words a screen reader reads for a line's sign. */
const SAID = { "-": "removed", "+": "added", " ": "unchanged" } as const;

/** A hunk's header in words: which lines it covers, before and after. */
function hunkWords(h: Hunk): string {
  const span = (start: number, n: number) => (n === 0 ? "none" : n === 1 ? `line ${start}` : `lines ${start} to ${start + n - 1}`);
  return `Before: ${span(h.oldStart, h.oldCount)}; after: ${span(h.newStart, h.newCount)}.`;
}

/** The diff drawn: one table per file under its name and notes. */
export function diffView(files: DiffFile[], label: string): HTMLElement {
  const box = el("div", { class: "diff" });
  for (const f of files) {
    const name = f.to ?? f.from ?? "(unnamed)";
    const renamed = f.from !== null && f.to !== null && f.from !== f.to;
    const head = el("p", { class: "diff-file" }, el("span", { class: "mono diff-name" }, renamed ? `${f.from} → ${f.to}` : name));
    const notes = [...f.notes];
    if (f.binary) {
      notes.push("A binary file: its change is not shown as text. Download the files of this task to see it.");
    }
    const part = el("section", { class: "diff-part", "aria-label": `${label}: ${name}` }, head, ...notes.map((t) => el("p", { class: "diff-note" }, t)));
    if (f.hunks.length) {
      const body = el("tbody");
      for (const h of f.hunks) {
        body.append(
          el(
            "tr",
            { class: "diff-hunk" },
            el("td", { colspan: "4" }, el("span", { class: "mono", "aria-hidden": "true" }, h.header), el("span", { class: "sr-only" }, hunkWords(h))),
          ),
        );
        for (const l of h.lines) {
          if (l.kind === "\\") {
            body.append(el("tr", { class: "diff-eol" }, el("td", { colspan: "4" }, "No line break at the end of the file here.")));
            continue;
          }
          const cls = l.kind === "-" ? "diff-del" : l.kind === "+" ? "diff-add" : "diff-ctx";
          const sign = l.kind === "-" ? "−" : l.kind === "+" ? "+" : "";
          body.append(
            el(
              "tr",
              { class: cls },
              el("td", { class: "diff-ln" }, l.old === undefined ? "" : String(l.old)),
              el("td", { class: "diff-ln" }, l.new === undefined ? "" : String(l.new)),
              el("td", { class: "diff-sign" }, el("span", { "aria-hidden": "true" }, sign), el("span", { class: "sr-only" }, SAID[l.kind])),
              el("td", { class: "diff-code" }, l.text),
            ),
          );
        }
      }
      part.append(
        el(
          "table",
          { class: "diff-table" },
          el("caption", { class: "sr-only" }, `Changes to ${name}, line by line`),
          el(
            "colgroup",
            {},
            el("col", { class: "diff-ln-col" }),
            el("col", { class: "diff-ln-col" }),
            el("col", { class: "diff-sign-col" }),
            el("col", {}),
          ),
          el("thead", { class: "sr-only" }, el("tr", {}, el("th", { scope: "col" }, "Old line"), el("th", { scope: "col" }, "New line"), el("th", { scope: "col" }, "Change"), el("th", { scope: "col" }, "Text"))),
          body,
        ),
      );
    }
    box.append(part);
  }
  return box;
}
