// Small DOM helpers shared by every view. No framework: views build elements
// with h() and update the parts that change on each poll.

// h('button', {class: 'x', testid: 'save', onclick: fn, disabled: true}, 'Save')
// Props: `class`, `testid` (→ data-testid), `on*` functions (event listeners),
// `dataset`, `style` (CSS text), booleans (set as properties), anything else
// as an attribute. Children: strings, numbers, nodes, arrays; null, undefined
// and false are skipped. Text is always set as text, never parsed as HTML.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'testid') el.dataset.testid = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    // Through the CSSOM: corrald's Content-Security-Policy (style-src 'self')
    // blocks style attributes, not element.style.
    else if (key === 'style') el.style.cssText = value;
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (value === true) {
      el.setAttribute(key, '');
      if (key in el) el[key] = true;
    } else if (key === 'value' && 'value' in el) el.value = value;
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// Replaces the children of `el`.
export function setChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'testid') el.dataset.testid = value;
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Updates the rows of `tbody` from `items` without rebuilding rows whose
// content did not change, so that a poll does not reset what the user is
// pointing at. `render(item)` returns a <tr>; `signature(item)` says when a
// row must be rebuilt (default: its JSON).
export function keyedRows(tbody, items, key, render, signature = (i) => JSON.stringify(i)) {
  const old = tbody._rows || new Map();
  const next = new Map();
  const rows = [];
  for (const item of items) {
    const k = key(item);
    const sig = signature(item);
    let entry = old.get(k);
    if (!entry || entry.sig !== sig) entry = {sig, tr: render(item)};
    next.set(k, entry);
    rows.push(entry.tr);
  }
  tbody._rows = next;
  // Only touch the DOM when the order or a row changed.
  const current = Array.from(tbody.children);
  if (current.length !== rows.length || current.some((tr, i) => tr !== rows[i])) {
    tbody.replaceChildren(...rows);
  }
}

export function spinner() {
  return h('span', {class: 'spinner', 'aria-hidden': 'true'});
}

// A status badge: Running green, Creating/... blue, Failed red, and so on.
export function statusBadge(status, testid) {
  const kind = {
    Running: 'ok', Creating: 'busy', Deleting: 'busy', Terminating: 'busy',
    Failed: 'bad', Terminated: 'off', Deleted: 'off',
  }[status] || 'off';
  return h('span', {class: `badge badge-${kind}`, testid}, status);
}

// Colour class of a Slurm node state ("idle", "mixed", "drained", "down*", ...).
export function nodeStateKind(state) {
  const s = (state || '').toLowerCase();
  if (!s) return 'off';
  if (s.startsWith('idle')) return 'ok';
  if (s.startsWith('alloc') || s.startsWith('mix') || s.startsWith('completing')) return 'busy';
  if (s.startsWith('drain') || s.startsWith('down') || s.startsWith('fail') ||
      s.includes('not_responding') || s.endsWith('*')) return 'bad';
  return 'off';
}

// Colour class of a Slurm job state.
export function jobStateKind(state) {
  switch (state) {
    case 'RUNNING': case 'COMPLETING': return 'busy';
    case 'COMPLETED': return 'ok';
    case 'PENDING': case 'SUSPENDED': case 'REQUEUED': return 'off';
    default: return 'bad';  // FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
  }
}

export function badge(text, kind, testid) {
  return h('span', {class: `badge badge-${kind}`, testid}, text);
}

// "2026-11-30 06:52:02" in local time, from Unix seconds (0: "-").
export function formatTime(seconds) {
  if (!seconds) return '-';
  return formatDate(new Date(seconds * 1000));
}

export function formatTimeMs(ms) {
  if (!ms) return '-';
  return formatDate(new Date(ms));
}

function formatDate(d) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
         `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "5s", "3m", "2h", "4d" since Unix seconds `since`.
export function formatAge(since) {
  if (!since) return '-';
  const s = Math.max(0, Math.floor(Date.now() / 1000 - since));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

// "1:02:03" from a number of seconds.
export function formatDuration(seconds) {
  if (seconds < 0) seconds = 0;
  const d = Math.floor(seconds / 86400);
  const hh = Math.floor((seconds % 86400) / 3600);
  const mm = Math.floor((seconds % 3600) / 60);
  const ss = Math.floor(seconds % 60);
  const pad = (n) => String(n).padStart(2, '0');
  const clock = `${hh}:${pad(mm)}:${pad(ss)}`;
  return d > 0 ? `${d}-${clock}` : clock;
}

// "Key=Value Key2=Value2" from {Key: Value}.
export function formatOptions(options) {
  const entries = Object.entries(options || {});
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(' ') : '-';
}

// Copies `text` to the clipboard. navigator.clipboard needs a secure context
// (https or localhost); elsewhere fall back to a hidden textarea.
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch (e) { /* fall through to the fallback */ }
  const area = h('textarea', {style: 'position:fixed;left:-9999px;top:0'});
  area.value = text;
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
  area.remove();
  return ok;
}

// A line for errors shown next to the control that caused them.
export function errorLine(testid) {
  return h('div', {class: 'error-line', testid, role: 'alert', hidden: true});
}

export function showError(el, error) {
  if (!el) return;
  if (!error) {
    el.hidden = true;
    el.textContent = '';
    return;
  }
  el.hidden = false;
  el.textContent = error.message || String(error);
}

// Runs `fn` while `button` is disabled and shows its error in `errorEl`.
// Returns fn's result, or undefined when it threw.
export async function runAction(button, errorEl, fn) {
  showError(errorEl, null);
  const wasDisabled = button ? button.disabled : false;
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    showError(errorEl, e);
    return undefined;
  } finally {
    if (button && button.isConnected) button.disabled = wasDisabled;
  }
}

// A modal dialog. `body` is an array of nodes (e.g. form fields). The
// confirm button runs `onConfirm()`; when it throws, the message is shown in
// the dialog and the dialog stays open. Resolves with onConfirm's result, or
// null when cancelled.
export function openDialog({title, body = [], confirmLabel = 'OK', danger = false, onConfirm}) {
  return new Promise((resolve) => {
    const error = errorLine('dialog-error');
    const confirm = h('button', {
      type: 'submit', class: danger ? 'danger' : 'primary', testid: 'dialog-confirm',
    }, confirmLabel);
    const cancel = h('button', {type: 'button', testid: 'dialog-cancel'}, 'Cancel');
    const form = h('form', {method: 'dialog', class: 'dialog-form'},
      h('h2', {}, title),
      h('div', {class: 'dialog-body'}, body),
      error,
      h('div', {class: 'dialog-buttons'}, cancel, confirm));
    const dialog = h('dialog', {testid: 'dialog'}, form);
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    cancel.addEventListener('click', () => finish(null));
    dialog.addEventListener('cancel', (e) => { e.preventDefault(); finish(null); });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const result = await runAction(confirm, error, async () => ({value: await onConfirm()}));
      if (result) finish(result.value === undefined ? true : result.value);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    const first = dialog.querySelector('input, textarea, select');
    (first || confirm).focus();
  });
}

// A labelled form field: h('label') around a caption and the control.
export function field(caption, control, hint) {
  return h('label', {class: 'field'},
    h('span', {class: 'field-caption'}, caption),
    control,
    hint ? h('small', {class: 'hint'}, hint) : null);
}
