/** The SDK's version, sent with every event as `$lib_version` (a test checks it against package.json). */
export const VERSION = "0.3.1";
