// The browser tests' harness (never part of the shipped bundle): it loads the
// shipped bundle, runs its crypto on what the Go test passes in, and returns
// what it computed as hex, base64 or text for the Go test to compare.
const cs = await import(window.BUNDLE);
const hex = cs.toHex;
const unhex = cs.fromHex;
const b64 = cs.toBase64;
const unb64 = cs.fromBase64;
const text = (b) => new TextDecoder("utf-8", { fatal: true }).decode(b);
const bytes = (s) => new TextEncoder().encode(s);

// refused runs f and reports whether it threw; a tamper case must.
async function refused(f) {
  try {
    await f();
    return false;
  } catch (e) {
    return e instanceof cs.CryptoError;
  }
}

async function importPair(scalarHex, pubkey) {
  const point = await cs.parseP256PublicKey(pubkey);
  return cs.importP256PrivateKey(unhex(scalarHex), point);
}

function ephemeral(scalarHex, pointHex) {
  return cs.importP256PrivateKey(unhex(scalarHex), unhex(pointHex));
}

// vectors computes every value of the contract's vectors the device side
// makes or opens.
async function vectors(v) {
  const out = {};
  const dc = v.device_copy;
  const id = v.derivation.task_id;
  const device = await importPair(dc.device_private_scalar, dc.device_pubkey);
  out.device_key_extractable = device.privateKey.extractable;
  out.device_pubkey = cs.formatP256PublicKey(device.publicKey);
  out.device_copy_info = text(cs.info("device-copy", id));
  out.device_copy_plaintext = hex(await cs.openWith(device, "device-copy", id, unhex(dc.blob)));
  out.device_copy_blob = hex(
    await cs.sealToWith(
      await ephemeral(dc.ephemeral_private_scalar, dc.ephemeral_public),
      unhex(dc.nonce),
      dc.device_pubkey,
      "device-copy",
      id,
      unhex(dc.plaintext_hex),
    ),
  );

  const key = await cs.ContentKey.fromBytes(unhex(v.content.content_key));
  const plain = await key.openContent(v.content.aad, unhex(v.content.blob));
  out.content_plaintext = text(plain);
  const content = cs.readContent(plain);
  out.envelope_text = text(content.envelope);
  out.request_text = text(content.request);
  out.task_hash = await cs.taskHash(content.envelope);

  // The chain a device runs: its copy of the key opens the content.
  const unwrapped = await cs.unwrapContentKey(device, id, unhex(dc.blob));
  out.chain_plaintext = text(await unwrapped.openContent(id, unhex(v.content.blob)));

  const fileKey = await cs.ContentKey.fromBytes(unhex(v.file.content_key));
  out.file_aad = text(cs.fileAAD(id, v.file.n));
  out.file_plaintext = hex(await fileKey.openFile(id, v.file.n, unhex(v.file.blob)));

  const rk = await cs.ContentKey.fromBytes(unhex(v.receipt.content_key));
  out.receipt_key = hex(rk.receiptKeyBytes());
  out.receipt_input = await rk.receiptSum(bytes(v.receipt.request));
  out.receipt_verifies = await rk.receiptVerify(bytes(v.receipt.request), v.receipt.input_sha256);
  out.receipt_bare_verifies = await rk.receiptVerify(
    bytes(v.receipt.request),
    v.receipt.bare_sha256_of_request_must_not_appear,
  );
  out.receipt_bare_differs = (await rk.receiptSum(bytes(v.receipt.request))) !== (await cs.sha256Hex(bytes(v.receipt.request)));

  const a = v.answer;
  out.answer_info = text(cs.info("answer", id));
  out.answer_blob = hex(
    await cs.sealToWith(
      await ephemeral(a.ephemeral_private_scalar, dc.ephemeral_public),
      unhex(a.nonce),
      a.to_reply_pubkey,
      "answer",
      id,
      bytes(a.plaintext),
    ),
  );
  const reply = await importPair(v.derivation.reply_private_scalar, v.derivation.reply_pubkey);
  out.answer_plaintext = text(await cs.openWith(reply, "answer", id, unhex(a.blob)));

  out.supply_hashes = [];
  for (const s of v.supply_hash) {
    const n = s.note === null ? null : unb64(s.note);
    const p = s.supplied === null ? null : unb64(s.supplied);
    out.supply_hashes.push(await cs.supplyHash(n, p));
  }

  // The whole of opening a listed task, on the vector's task.
  const env = JSON.parse(out.envelope_text);
  const view = {
    id: env.id,
    kind: env.kind,
    preparer: env.preparer,
    project: env.project,
    project_uuid: env.project_uuid,
    thread: env.thread,
    created_at: env.created_at,
    expires_at: env.expires_at,
    reply_pubkey: env.reply_pubkey,
    task_hash: v.envelope.task_hash,
    content: b64(unhex(v.content.blob)),
    device_copy: b64(unhex(dc.blob)),
    locked: false,
  };
  const opened = await cs.openTask(device, env.owner, view);
  out.opened_task_hash = opened.taskHash;
  out.opened_envelope = text(opened.envelopeBytes);
  out.opened_reply_pubkey = opened.replyPubkey;
  const refusal = async (view, account) => {
    try {
      await cs.openTask(device, account ?? env.owner, view);
      return "opened";
    } catch (e) {
      return e instanceof cs.OpenError ? e.reason : String(e);
    }
  };
  out.open_refusals = {
    other_preparer: await refusal({ ...view, preparer: "mallory.near" }),
    other_owner: await refusal(view, "mallory.near"),
    other_expiry: await refusal({ ...view, expires_at: "2027-11-30T12:00:00Z" }),
    other_hash: await refusal({ ...view, task_hash: "0".repeat(64) }),
    other_id: await refusal({ ...view, id: "r7k2m9q4x1z8c3v6b5n0p2w4s6-2", thread: view.id }),
    locked: await refusal({ ...view, locked: true }),
    closed: await refusal({ ...view, content: null }),
    no_copy: await refusal({ ...view, device_copy: null }),
  };
  return out;
}

// device makes this page's device key, as the page does before sign-in.
let device;
async function newDevice() {
  device = await cs.generateDeviceKey();
  return {
    pubkey: cs.formatP256PublicKey(device.publicKey),
    extractable: device.privateKey.extractable,
    type: device.privateKey.type,
    usages: device.privateKey.usages,
  };
}

// keep takes the device key kept in IndexedDB database db (making it the
// first time), as the page does, and makes it this tab's device key.
async function keep(db) {
  device = await cs.deviceKey(db);
  return {
    pubkey: cs.formatP256PublicKey(device.publicKey),
    extractable: device.privateKey.extractable,
    type: device.privateKey.type,
    usages: device.privateKey.usages,
  };
}

// keepAtOnce asks for the kept key of db several times at once.
async function keepAtOnce(db) {
  const keys = await Promise.all([1, 2, 3, 4].map(() => cs.deviceKey(db)));
  return keys.map((k) => cs.formatP256PublicKey(k.publicKey));
}

async function forget(db) {
  await cs.forgetDeviceKey(db);
  return (await cs.loadDeviceKey(db)) === null;
}

// open opens what Go sealed to the page's device key.
async function open(t) {
  const key = await cs.unwrapContentKey(device, t.id, unb64(t.device_copy));
  const content = cs.readContent(await key.openContent(t.id, unb64(t.content)));
  const files = [];
  for (let n = 0; n < t.files.length; n++) {
    files.push(hex(await key.openFile(t.id, n, unb64(t.files[n]))));
  }
  const opened = await cs.openTask(device, t.account, {
    ...t.view,
    content: t.content,
    device_copy: t.device_copy,
    locked: false,
  });
  const taskFiles = [];
  for (let n = 0; n < t.files.length; n++) {
    taskFiles.push(hex(await cs.openTaskFile(opened, n, unb64(t.files[n]))));
  }
  const file0 = unb64(t.files[0]);
  const changed = file0.slice();
  changed[20] ^= 1;
  return {
    opened_task_hash: opened.taskHash,
    task_files: taskFiles,
    file_refused: [
      await refused(() => cs.openTaskFile(opened, 2, file0)),
      await refused(() => cs.openTaskFile(opened, t.files.length, file0)),
      await refused(() => cs.openTaskFile(opened, 0, changed)),
    ],
    envelope: hex(content.envelope),
    request: hex(content.request),
    task_hash: await cs.taskHash(content.envelope),
    receipt_input: await key.receiptSum(content.request),
    receipt_verifies: await key.receiptVerify(content.request, t.receipt_input),
    files,
  };
}

// openAs opens one listed task as several accounts, each with the listing
// a case gives (its owner, role and approvals), as the page does: "ok", or
// "refused" and the reason.
async function openAs(cases) {
  const out = [];
  for (const c of cases) {
    try {
      await cs.openTask(device, c.account, c.view);
      out.push("ok");
    } catch (err) {
      out.push(err instanceof cs.OpenError ? "refused " + err.reason : "threw " + String(err));
    }
  }
  return out;
}

// seal seals an answer, a note and a reason to a Go-made reply key.
async function seal(t) {
  const answer = await cs.sealReply(t.reply_pubkey, "answer", t.id, unb64(t.answer));
  const note = await cs.sealText(t.reply_pubkey, "note", t.id, t.note);
  const reason = await cs.sealText(t.reply_pubkey, "rejection", t.id, t.reason);
  return {
    answer: b64(answer),
    note: b64(note),
    reason: b64(reason),
    supply_hash: await cs.supplyHash(note, answer),
    supply_hash_answer_only: await cs.supplyHash(null, answer),
    too_large: await refused(() => cs.sealReply(t.reply_pubkey, "answer", t.id, new Uint8Array(8192 - 94 + 1))),
    largest: (await cs.sealReply(t.reply_pubkey, "answer", t.id, new Uint8Array(8192 - 94))).length,
  };
}

// tamper reports, for each damaged input, whether the page refused it.
async function tamper(t) {
  const flip = (b, i) => {
    const c = b.slice();
    c[i < 0 ? c.length + i : i] ^= 0x01;
    return c;
  };
  const copy = unb64(t.device_copy);
  const content = unb64(t.content);
  const key = await cs.unwrapContentKey(device, t.id, copy);
  const request = cs.readContent(await key.openContent(t.id, content)).request;
  const other = await cs.generateDeviceKey();
  return {
    copy_last_byte: await refused(() => cs.unwrapContentKey(device, t.id, flip(copy, -1))),
    copy_ephemeral: await refused(() => cs.unwrapContentKey(device, t.id, flip(copy, 10))),
    copy_other_task: await refused(() => cs.unwrapContentKey(device, t.other_id, copy)),
    copy_other_purpose: await refused(() => cs.openWith(device, "answer", t.id, copy)),
    copy_other_device: await refused(() => cs.unwrapContentKey(other, t.id, copy)),
    copy_version: await refused(() => cs.unwrapContentKey(device, t.id, Uint8Array.of(2, ...copy.slice(1)))),
    copy_short: await refused(() => cs.unwrapContentKey(device, t.id, copy.slice(0, 93))),
    content_tag: await refused(() => key.openContent(t.id, flip(content, -1))),
    content_body: await refused(() => key.openContent(t.id, flip(content, 20))),
    content_nonce: await refused(() => key.openContent(t.id, flip(content, 1))),
    content_other_task: await refused(() => key.openContent(t.other_id, content)),
    content_as_file: await refused(() => key.openFile(t.id, 0, content)),
    file_other_number: await refused(() => key.openFile(t.id, 1, unb64(t.files[0]))),
    receipt_changed: !(await key.receiptVerify(request, hex(flip(unhex(t.receipt_input), 0)))),
    receipt_other_request: !(await key.receiptVerify(bytes("{}"), t.receipt_input)),
    receipt_upper_hex: !(await key.receiptVerify(request, t.receipt_input.toUpperCase())),
  };
}

// strict reports which malformed inputs the parsers refuse.
async function strict(t) {
  const content = (s) => () => cs.readContent(bytes(s));
  const pk = (s) => () => cs.parseP256PublicKey(s);
  const good = t.pubkey;
  return {
    content_duplicate: await refused(content('{"envelope":"a","request":"b","request":"c"}')),
    content_extra: await refused(content('{"envelope":"a","request":"b","x":"c"}')),
    content_missing: await refused(content('{"envelope":"a"}')),
    content_number: await refused(content('{"envelope":"a","request":1}')),
    content_trailing: await refused(content('{"envelope":"a","request":"b"} x')),
    content_two: await refused(content('{"envelope":"a","request":"b"}{}')),
    content_bom: await refused(content('\ufeff{"envelope":"a","request":"b"}')),
    content_bad_utf8: await refused(() => cs.readContent(Uint8Array.of(0x7b, 0xff, 0x7d))),
    content_unicode: text(cs.readContent(bytes(' {\n"request" : "r" , "envelope":"\\u00e9\\ud83e\\udd16\\ud800"} ')).envelope),
    pubkey_good: !(await refused(pk(good))),
    pubkey_prefix: await refused(pk("p257:" + good.slice(5))),
    pubkey_padded: await refused(pk(good + "=")),
    pubkey_std_alphabet: await refused(pk(t.pubkey_std)),
    pubkey_trailing_bits: await refused(pk(t.pubkey_trailing_bits)),
    pubkey_compressed: await refused(pk(t.pubkey_compressed)),
    pubkey_off_curve: await refused(pk(t.pubkey_off_curve)),
    pubkey_newline: await refused(pk(good.slice(0, 40) + "\n" + good.slice(41))),
    base64_roundtrip: b64(unb64(t.base64)) === t.base64,
    base64_unpadded: await refused(() => unb64(t.base64.replace(/=+$/, ""))),
  };
}

// openEntries opens history entries Go sealed, with their key wrapped to
// the page's device key, as the page does: each body, or why not.
async function openEntries(list) {
  const out = [];
  for (const e of list) {
    try {
      out.push(JSON.stringify(await cs.openEntry(device, e)));
    } catch (err) {
      out.push(err instanceof cs.EntryError ? "refused " + err.reason : "threw " + String(err));
    }
  }
  return out;
}

window.harness = { vectors, newDevice, keep, keepAtOnce, forget, open, openAs, seal, tamper, strict, openEntries };
