// A view's own Content Security Policy, set as the first thing its script does (kit.ts imports
// this module before any other): once set, the document loads nothing from the network (no image,
// stylesheet, font, fetch, frame or form), and evaluates no string as code. It is a second wall
// behind setting every value as text (kit.ts), and holds in a host that applies no CSP of its own
// to the view's frame. Styles stay allowed: the stylesheet is inline, and the host's colours are
// set on the element. No script runs after this one either (script-src 'none': set once the view's
// own inline script is running, it stops only what comes later): markup a bug let in could
// otherwise press the card's buttons and call tools through the host's bridge.
//
// Before the SDK's modules run because zod, which checks the host's messages, asks once, as its
// schemas are built, whether it may compile code from strings: asked after the policy, it is told
// no and checks without; asked before, it compiled later, under the policy, and threw.
const POLICY = "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const meta = document.createElement('meta');
meta.httpEquiv = 'Content-Security-Policy';
meta.content = POLICY;
document.head.prepend(meta);
