/**
 * The renderer's own styles, inside its shadow root: page CSS cannot select
 * what is inside, and `all: initial` on the host stops inherited properties
 * (font, colour, line height, text alignment) from reaching in. Colours meet
 * WCAG AA contrast. With `prefers-reduced-motion: reduce` nothing moves.
 */
export const CSS = `
:host{all:initial}
*{box-sizing:border-box;margin:0;padding:0}
.backdrop{position:fixed;inset:0;background:rgba(17,24,39,.5);z-index:2147483646}
.box{position:fixed;z-index:2147483647;background:#fff;color:#111827;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;text-align:left;border-radius:10px;box-shadow:0 10px 30px rgba(0,0,0,.25);padding:20px 24px;animation:strata-in .18s ease-out}
.box:focus{outline:none}
.box:focus-visible{outline:2px solid #1d4ed8;outline-offset:2px}
.modal{top:50%;left:50%;transform:translate(-50%,-50%);width:min(480px,calc(100vw - 32px));max-height:calc(100vh - 32px);overflow:auto}
.banner{left:0;right:0;border-radius:0;display:flex;flex-wrap:wrap;align-items:center;gap:8px 24px;padding:12px 56px 12px 24px}
.banner.top{top:0}
.banner.bottom{bottom:0}
.banner .content{flex:1 1 320px}
.banner .actions{margin:0}
.tooltip{width:min(320px,calc(100vw - 16px));padding:16px 20px}
.arrow{position:absolute;width:12px;height:12px;background:#fff;transform:rotate(45deg)}
h2{font-size:17px;line-height:1.35;font-weight:600;margin:0 28px 6px 0}
.body p{margin:0 0 8px}
.body ul{margin:0 0 8px 20px}
.body code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:1px 4px;border-radius:4px}
a{color:#1d4ed8;text-decoration:underline}
button{font:inherit;cursor:pointer;border-radius:6px;padding:7px 14px;border:1px solid #9ca3af;background:#fff;color:#111827}
button:focus-visible,input:focus-visible+span,textarea:focus-visible{outline:2px solid #1d4ed8;outline-offset:2px}
button:disabled{cursor:default;color:#4b5563;background:#f3f4f6;border-color:#d1d5db}
button.primary{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
button.primary:disabled{background:#93a7d8;border-color:#93a7d8;color:#111827}
button.x{position:absolute;top:8px;right:8px;width:32px;height:32px;padding:0;border:0;background:transparent;font-size:22px;line-height:32px;color:#374151}
.actions{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin-top:14px}
.count{margin-right:auto;color:#4b5563;font-size:13px}
fieldset{border:0;margin:8px 0 0}
legend,label.prompt{display:block;font-weight:600;margin-bottom:8px}
.scale{display:flex;flex-wrap:wrap;gap:4px}
.opt{position:relative;display:flex;align-items:center;gap:8px;cursor:pointer;margin-bottom:6px}
.scale .opt{margin:0}
.scale .opt input{position:absolute;opacity:0;width:1px;height:1px}
.scale .opt span{display:inline-block;min-width:32px;text-align:center;padding:6px 4px;border:1px solid #9ca3af;border-radius:6px}
.scale .opt input:checked+span{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
.ends{display:flex;justify-content:space-between;color:#4b5563;font-size:13px;margin-top:4px}
textarea{display:block;width:100%;min-height:90px;font:inherit;color:#111827;background:#fff;border:1px solid #9ca3af;border-radius:6px;padding:8px}
@keyframes strata-in{from{opacity:0}to{opacity:1}}
@media (prefers-reduced-motion:reduce){*,*::before,*::after{animation:none!important;transition:none!important}}
`;
