// The bugs of the capture page (see main.go). Each one throws a real error
// in its own way; run() catches it and hands it to report(), which the page
// (or node.js) defines. The tests assume each bug's frames are its own and
// that build b is this file moved down; keep both true when adding a bug.
//
// Calls are kept out of tail position (the result is stored, then
// returned): in strict code JavaScriptCore makes proper tail calls, which
// drop the caller's frame from the stack, and only the bug "tail" shows
// that on purpose.
"use strict";

// named: a TypeError in a named function.
function computeTotal(cart) {
  return cart.items.length * cart.price;
}
function bugNamed() {
  const total = computeTotal({});
  return total;
}

// method: a RangeError thrown by a class method, called by another method.
class Cart {
  constructor() {
    this.items = [];
  }
  total() {
    const sum = this.sum(this.items);
    return sum;
  }
  sum(items) {
    if (items.length === 0) throw new RangeError("empty cart");
    return items.reduce((a, b) => a + b, 0);
  }
}
function bugMethod() {
  const total = new Cart().total();
  return total;
}

// object: a method of an object literal (V8 writes Object.save).
const store = {
  save(item) {
    const id = item.id.toString();
    return id;
  },
};
function bugObject() {
  const id = store.save({});
  return id;
}

// timeout: an anonymous arrow function run by setTimeout.
function bugTimeout(done) {
  const settings = { retries: null };
  setTimeout(() => {
    try {
      settings.retries.count += 1;
    } catch (e) {
      done(e);
    }
  }, 0);
}

// async: an async function that throws after an await, awaited by another.
async function fetchProfile(id) {
  await Promise.resolve();
  throw new Error("profile " + id + " not found");
}
async function loadUser(id) {
  const profile = await fetchProfile(id);
  return profile.name;
}
async function bugAsync() {
  const name = await loadUser(42);
  return name;
}

// eval: a function defined and called inside eval'd code.
function runScript(source) {
  const result = eval(source);
  return result;
}
function bugEval() {
  const result = runScript("function evalBug(x) {\n  return x.toUpperCase();\n}\nevalBug(7);");
  return result;
}

// json: a SyntaxError thrown by a native function, JSON.parse.
function parseSettings(text) {
  const settings = JSON.parse(text);
  return settings;
}
function bugJSON() {
  const settings = parseSettings("{bad json");
  return settings;
}

// map: a TypeError in a callback that Array.prototype.map calls.
function formatPrices(prices) {
  const formatted = prices.map(function formatPrice(p) {
    return p.toFixed(2);
  });
  return formatted;
}
function bugMap() {
  const formatted = formatPrices([1.5, null]);
  return formatted;
}

// constructor: a TypeError thrown by a constructor called with new.
class Widget {
  constructor(options) {
    if (!options.element) throw new TypeError("Widget needs an element");
    this.element = options.element;
  }
}
function bugConstructor() {
  const widget = new Widget({});
  return widget;
}

// sdk: a handler the SDK's wrapper calls (wrap is in /sdk/v1/sdk.min.js).
function onSave() {
  throw new Error("save failed");
}
function bugSDK() {
  const saved = globalThis.strataStub.wrap(onSave)();
  return saved;
}

// tail: a TypeError under two calls in tail position, which
// JavaScriptCore leaves out of the stack and the other engines keep.
function readName(user) {
  return user.profile.name;
}
function displayName(user) {
  return readName(user);
}
function bugTail() {
  return displayName({});
}

const bugs = {
  named: bugNamed,
  method: bugMethod,
  object: bugObject,
  timeout: bugTimeout,
  async: bugAsync,
  eval: bugEval,
  json: bugJSON,
  map: bugMap,
  constructor: bugConstructor,
  sdk: bugSDK,
  tail: bugTail,
};

// run calls one bug and reports what it threw.
function run(name) {
  const bug = bugs[name];
  if (bug.length === 1) {
    bug((e) => report(name, e));
    return;
  }
  try {
    const result = bug();
    if (result && typeof result.then === "function") {
      result.then(
        () => report(name, null),
        (e) => report(name, e),
      );
      return;
    }
    report(name, null);
  } catch (e) {
    report(name, e);
  }
}

for (const name of Object.keys(bugs)) {
  run(name);
}
