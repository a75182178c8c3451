// The web inbox's entry point. On the inbox's page (the shell
// httpapi serves at /) it mounts the page; anywhere else it does nothing.
// It also exports the device's crypto and its kept key, which the browser
// tests load from the shipped bundle and check against the contract's
// vectors and against the Go side, the pasted answers' check, the wallets'
// manifest, the diff reader, the words of a history entry's end, the
// check of an answer against its shape, the reading of a task's write for
// "Always allow this" and the reading of the service's answers and
// refusals, which they check as shipped.
import { mountInbox } from "./page";

export * from "./crypto";
export * from "./devicekey";
export { approvalSentence, signInSentence } from "./sign";
export { pasted, RPC, WALLETS } from "./wallet";
export { endingWords, sentenceTime } from "./words";
export { parseDiff, diffView } from "./diff";
export { fitsShape, readTextShape } from "./answer";
export { allowWhen } from "./allow";
export { readAnswer, readRefusal, Unreadable } from "./api";
export { fromBase58, preparingRun, readSigned, receiptBytes, runKeys, verifyReceipt } from "./origin";

mountInbox();
