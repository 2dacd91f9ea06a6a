// A view's own Content Security Policy, set as the first thing its script does (kit.ts imports
// this module before any other): once set, the document loads nothing from the network (no image,
// stylesheet, font, fetch, frame or form), and evaluates no string as code. It is a second wall
// behind setting every value as text (kit.ts), and holds in a host that applies no CSP of its own
// to the view's frame. Styles stay allowed: the stylesheet is inline, and the host's colours are
// set on the element. Inline script is not forbidden here (script-src 'unsafe-inline'):
// test/apps.browser.test.ts shows its check for injected markup is live by running a handler.
//
// Before the SDK's modules run because zod, which checks the host's messages, asks once, as its
// schemas are built, whether it may compile code from strings: asked after the policy, it is told
// no and checks without; asked before, it compiled later, under the policy, and threw.
const POLICY = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const meta = document.createElement('meta');
meta.httpEquiv = 'Content-Security-Policy';
meta.content = POLICY;
document.head.prepend(meta);
