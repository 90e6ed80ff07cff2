// Runs bugs.js under Node, as the capture page runs it in a browser, and
// prints what each bug threw as one JSON object on stdout. The argument is
// a directory holding sdk/v1/sdk.min.js and app/bugs.js (main.go writes
// them there, so that the stacks name a stable path).
"use strict";
const path = require("path");

const dir = process.argv[2];
const reports = [];
const expected = Number(process.argv[3]);

globalThis.window = globalThis;
globalThis.report = (bug, e) => {
  reports.push({
    bug,
    name: e ? String(e.name) : "",
    message: e ? String(e.message) : "",
    stack: e ? String(e.stack) : "",
  });
  if (reports.length === expected) {
    process.stdout.write(JSON.stringify({ version: process.version, reports }) + "\n");
  }
};
require(path.join(dir, "sdk", "v1", "sdk.min.js"));
require(path.join(dir, "app", "bugs.js"));
