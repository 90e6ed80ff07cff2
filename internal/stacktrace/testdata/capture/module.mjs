// module: a ReferenceError in a module's top-level code (JavaScriptCore
// names that frame "module code"). Loaded by the page as a module script.
try {
  startAnalytics();
} catch (e) {
  report("module", e);
}
