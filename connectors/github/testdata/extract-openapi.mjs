// Extracts from GitHub's published OpenAPI description the operations the
// github connector uses, with every component they reach, into
// github-openapi.json beside this script: the copy the tests read only
// when the npm registry cannot be reached (otherwise they read the whole
// document, which description_test.go fetches into the user's cache
// directory and checks). The description comes from the npm package
// @octokit/openapi, pinned:
//
//   npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
//   node extract-openapi.mjs package/generated/api.github.com.json
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const used = {
  "/repos/{owner}/{repo}": ["get"],
  "/repos/{owner}/{repo}/git/ref/{ref}": ["get"],
  "/repos/{owner}/{repo}/git/refs": ["post"],
  "/repos/{owner}/{repo}/git/refs/{ref}": ["patch"],
  "/repos/{owner}/{repo}/git/commits": ["post"],
  "/repos/{owner}/{repo}/git/commits/{commit_sha}": ["get"],
  "/repos/{owner}/{repo}/git/blobs": ["post"],
  "/repos/{owner}/{repo}/git/trees": ["post"],
  "/repos/{owner}/{repo}/git/trees/{tree_sha}": ["get"],
  "/repos/{owner}/{repo}/contents/{path}": ["get", "put"],
  "/repos/{owner}/{repo}/issues": ["post"],
  "/repos/{owner}/{repo}/issues/{issue_number}": ["get", "patch"],
  "/repos/{owner}/{repo}/issues/{issue_number}/comments": ["post"],
  "/repos/{owner}/{repo}/pulls": ["post"],
  "/repos/{owner}/{repo}/pulls/{pull_number}": ["get"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/reviews": ["post"],
  "/repos/{owner}/{repo}/pulls/{pull_number}/merge": ["put"],
  "/gists": ["post"],
  "/gists/{gist_id}": ["get", "patch"],
  "/user/starred/{owner}/{repo}": ["put", "delete"],
};

const src = process.argv[2];
if (!src) {
  console.error("usage: node extract-openapi.mjs path/to/api.github.com.json");
  process.exit(2);
}
const doc = JSON.parse(readFileSync(src, "utf8"));
const out = { openapi: doc.openapi, info: { ...doc.info, description: "The operations the github connector uses, extracted from @octokit/openapi@23.0.2 (generated/api.github.com.json)." }, servers: doc.servers, paths: {}, components: {} };

const reached = new Set();
const todo = [];
function walk(v) {
  if (Array.isArray(v)) return v.forEach(walk);
  if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string" && !reached.has(x)) {
        reached.add(x);
        todo.push(x);
      } else walk(x);
    }
  }
}
// Examples are not needed to validate and make most of the bytes.
function strip(v) {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === "object") {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === "examples" || k === "x-github" || k === "externalDocs") continue;
      o[k] = strip(x);
    }
    return o;
  }
  return v;
}
for (const [path, methods] of Object.entries(used)) {
  const item = doc.paths[path];
  if (!item) throw new Error("no path " + path);
  out.paths[path] = {};
  for (const m of methods) {
    if (!item[m]) throw new Error("no " + m + " " + path);
    out.paths[path][m] = strip(item[m]);
  }
  if (item.parameters) out.paths[path].parameters = item.parameters;
  walk(out.paths[path]);
}
while (todo.length) {
  const ref = todo.pop();
  const [, , kind, name] = ref.split("/");
  const v = strip(doc.components[kind][name]);
  (out.components[kind] ??= {})[name] = v;
  walk(v);
}
for (const kind of Object.keys(out.components)) {
  out.components[kind] = Object.fromEntries(Object.entries(out.components[kind]).sort(([a], [b]) => a.localeCompare(b)));
}
const dst = join(dirname(fileURLToPath(import.meta.url)), "github-openapi.json");
writeFileSync(dst, JSON.stringify(out, null, 1) + "\n");
console.log("wrote", dst, Object.keys(out.paths).length, "paths,", reached.size, "components");
