/* global document, window */
/**
 * The console's shell: the sign-in screen, the navigation and a hash router. Routes (the hash never holds
 * the token):
 *   #/runs             runs and their states            (runs-view.js)
 *   #/runs/{runId}     one run's timeline                (timeline-view.js)
 *   #/inbox[/{id}]     the approval inbox, one proposal  (inbox-view.js)
 *   #/cases            the operator queue                (cases-view.js)
 *   #/corrections      the corrections queue             (corrections-view.js)
 * A view is `async (el, arg, ctx)` that fills `el`; `ctx.reload()` renders the current route again. Views
 * load only when asked: nothing refreshes by itself, so what the operator reads stays what they decide on.
 */
import { api, ApiRefusal, setUnauthorizedHandler, tokenStore } from './api.js';
import { renderCases } from './cases-view.js';
import { renderCorrections } from './corrections-view.js';
import { h } from './dom.js';
import { renderInbox } from './inbox-view.js';
import { refusalBox } from './refusal.js';
import { renderRuns } from './runs-view.js';
import { renderTimeline } from './timeline-view.js';

const ROUTES = [
  { nav: 'runs', re: /^#\/runs\/(.+)$/, view: renderTimeline },
  { nav: 'runs', re: /^#\/runs\/?$/, view: renderRuns },
  { nav: 'inbox', re: /^#\/inbox\/(.+)$/, view: renderInbox },
  { nav: 'inbox', re: /^#\/inbox\/?$/, view: renderInbox },
  { nav: 'cases', re: /^#\/cases\/?$/, view: renderCases },
  { nav: 'corrections', re: /^#\/corrections\/?$/, view: renderCorrections },
];

const $ = (id) => document.getElementById(id);

function showSignIn(refusal) {
  $('nav').hidden = true;
  $('sign-out').hidden = true;
  $('view').hidden = true;
  $('view').replaceChildren();
  $('sign-in').hidden = false;
  $('sign-in-error').replaceChildren(refusal ? refusalBox(refusal) : '');
  $('token').focus();
}

function showApp() {
  $('sign-in').hidden = true;
  $('nav').hidden = false;
  $('sign-out').hidden = false;
  $('view').hidden = false;
  void route();
}

/** Renders the view of the current hash into a fresh container (a late answer fills a detached one). */
async function route() {
  if (!tokenStore.get()) return showSignIn();
  const hash = window.location.hash || '#/runs';
  const match = ROUTES.map((r) => ({ r, m: r.re.exec(hash) })).find((x) => x.m);
  for (const a of document.querySelectorAll('#nav a'))
    a.toggleAttribute('aria-current', a.dataset.nav === match?.r.nav);
  const el = h('div', { class: 'view-body', 'data-route': hash }, h('p', { class: 'loading' }, 'Loading…'));
  $('view').replaceChildren(el);
  if (!match) {
    el.replaceChildren(h('p', {}, 'No such page. '), h('a', { href: '#/runs' }, 'Runs'));
    return;
  }
  const arg = match.m[1] === undefined ? null : decodeURIComponent(match.m[1]);
  const body = h('div', {});
  try {
    await match.r.view(body, arg, { reload: () => void route() });
    el.replaceChildren(body);
  } catch (err) {
    el.replaceChildren(body, refusalBox(err));
  }
}

async function signIn(event) {
  event.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  if (!token) return;
  $('sign-in-error').replaceChildren(h('p', { class: 'loading' }, 'Checking the token…'));
  try {
    // Any read proves the token; only an operator token's decisions will be accepted.
    await api('GET', '/v1/runs?limit=1', undefined, token);
  } catch (err) {
    $('sign-in-error').replaceChildren(refusalBox(err));
    return;
  }
  input.value = '';
  tokenStore.set(token);
  showApp();
}

function signOut() {
  tokenStore.clear();
  showSignIn();
}

setUnauthorizedHandler((refusal) => {
  tokenStore.clear();
  showSignIn(refusal instanceof ApiRefusal ? refusal : undefined);
});
$('sign-in-form').addEventListener('submit', (e) => void signIn(e));
$('sign-out').addEventListener('click', signOut);
window.addEventListener('hashchange', () => void route());
if (tokenStore.get()) showApp();
else showSignIn();
