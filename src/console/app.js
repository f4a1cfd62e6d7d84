// corral web console: sign-in, hash routing and live polling.
//
// Routes (hash, so that every tab can be linked and reloaded):
//   #/clusters                        the cluster list
//   #/create                          the create form
//   #/clusters/NAME[/TAB[/ITEM]]      a cluster; TAB is overview, nodes, jobs,
//                                     partitions, volumes or config; ITEM a
//                                     node (nodes) or a job id (jobs)
//
// The current view's refresh() runs every POLL_MS, so long operations
// (Creating, Deleting, a change being applied) update without a reload.

import {get, getToken, setToken, clearToken, onUnauthenticated} from './api.js';
import {h, setChildren, errorLine, runAction, field} from './dom.js';
import {clusterListView, createView} from './clusters.js';
import {clusterView} from './cluster.js';

const POLL_MS = 2000;

const main = document.getElementById('main');
const userBox = document.getElementById('user');
const topnav = document.getElementById('topnav');
const connection = document.getElementById('connection');

let whoami = null;     // GET /api/v1/whoami of the signed-in user.
let view = null;       // {el, refresh(), route?(), destroy?()}
let viewKey = '';      // Which view `view` is, e.g. "list" or "cluster:web".
let flashMessage = '';
let retryTimer = 0;
let signInMessage = '';

// What every view gets.
const ctx = {
  get whoami() { return whoami; },
  navigate(hash) {
    if (location.hash === hash) render();
    else location.hash = hash;
  },
  // A one-time message for the next view that asks for it.
  flash(message) { flashMessage = message; },
  takeFlash() {
    const m = flashMessage;
    flashMessage = '';
    return m;
  },
  refreshNow() { tick(); },
};

function parseRoute() {
  const path = location.hash.replace(/^#\/?/, '');
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch (e) { return p; }
  });
  if (parts[0] === 'create') return {view: 'create'};
  if (parts[0] === 'clusters' && parts[1]) {
    return {view: 'cluster', name: parts[1], tab: parts[2] || 'overview', item: parts[3] || ''};
  }
  return {view: 'list'};
}

async function render() {
  if (!getToken()) {
    showSignIn();
    return;
  }
  if (!whoami) {
    try {
      whoami = await get('/api/v1/whoami');
    } catch (e) {
      if (e.status === 401) return;  // onUnauthenticated showed the sign-in screen.
      setChildren(main, h('div', {class: 'banner banner-bad', testid: 'whoami-error'},
        `Cannot read who you are: ${e.message}. Retrying…`));
      clearTimeout(retryTimer);
      retryTimer = setTimeout(render, POLL_MS);
      return;
    }
    renderUser();
  }
  const r = parseRoute();
  const key = r.view === 'cluster' ? `cluster:${r.name}` : r.view;
  if (key !== viewKey || !view) {
    if (view && view.destroy) view.destroy();
    viewKey = key;
    if (r.view === 'create') view = createView(ctx);
    else if (r.view === 'cluster') view = clusterView(ctx, r.name);
    else view = clusterListView(ctx);
    main.replaceChildren(view.el);
    window.scrollTo(0, 0);
    document.title = r.view === 'create' ? 'New cluster · corral' : 'Clusters · corral';
  }
  if (view.route) view.route(r);
  tick();
}

// Polls the current view. A tick that is still running is not started twice.
let ticking = false;
let again = false;
async function tick() {
  if (!view || !getToken()) return;
  if (ticking) {
    again = true;
    return;
  }
  ticking = true;
  const current = view;
  try {
    await current.refresh();
    connection.hidden = true;
  } catch (e) {
    if (e.status === 0) {
      connection.hidden = false;
      connection.textContent = `${e.message}. Retrying…`;
    }
  } finally {
    ticking = false;
  }
  if (again) {
    again = false;
    tick();
  }
}

function renderUser() {
  topnav.hidden = !whoami;
  if (!whoami) {
    userBox.replaceChildren();
    return;
  }
  const projects = whoami.projects && whoami.projects.length ? whoami.projects.join(', ') : 'none';
  setChildren(userBox,
    h('span', {testid: 'whoami'},
      h('strong', {testid: 'whoami-user'}, whoami.user),
      whoami.admin ? h('span', {class: 'badge badge-busy', testid: 'whoami-admin'}, 'admin') : null,
      h('span', {class: 'muted'}, ` · projects: ${projects}`)),
    h('button', {type: 'button', testid: 'signout', onclick: signOut}, 'Sign out'));
}

function signOut() {
  clearToken();
  whoami = null;
  signInMessage = 'You are signed out.';
  showSignIn();
}

function showSignIn() {
  if (view && view.destroy) view.destroy();
  view = null;
  viewKey = '';
  whoami = null;
  renderUser();
  connection.hidden = true;
  document.title = 'Sign in · corral';
  const token = h('input', {type: 'password', testid: 'signin-token', autocomplete: 'off',
    required: true, placeholder: 'paste your API token'});
  const submit = h('button', {type: 'submit', class: 'primary', testid: 'signin-submit'}, 'Sign in');
  const error = errorLine('signin-error');
  const message = signInMessage;
  signInMessage = '';
  const form = h('form', {class: 'form card signin', testid: 'signin-form'},
    h('h1', {}, 'Sign in to corral'),
    message ? h('div', {class: 'banner banner-warn', testid: 'signin-message'}, message) : null,
    field('API token', token, 'An administrator makes one with: corrald admin token create NAME. ' +
      'It is kept in this browser tab only.'),
    error,
    h('div', {class: 'form-buttons'}, submit));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    runAction(submit, error, async () => {
      const t = token.value.trim();
      if (!t) throw new Error('paste your API token');
      // Check the token before keeping it.
      whoami = await get('/api/v1/whoami', {token: t});
      setToken(t);
      renderUser();
      if (!location.hash || location.hash === '#/signin') location.hash = '#/clusters';
      render();
    });
  });
  main.replaceChildren(form);
  token.focus();
}

onUnauthenticated((message) => {
  clearToken();
  signInMessage = `Please sign in again: ${message}`;
  showSignIn();
});

window.addEventListener('hashchange', render);
setInterval(tick, POLL_MS);
render();
