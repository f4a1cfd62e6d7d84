// One cluster's page (#/clusters/NAME/TAB[/ITEM]): a header with the status,
// any long operation in progress and the change being followed, then tabs.

import {get, clusterPath} from './api.js';
import {h, setChildren, statusBadge, errorLine, showError} from './dom.js';
import {progressLine, sizeText, updateFollowed, followedOf, changeBanner} from './actions.js';
import {overviewTab} from './overview.js';
import {nodesTab} from './nodes.js';
import {jobsTab} from './jobs.js';
import {partitionsTab} from './partitions.js';
import {volumesTab} from './volumes.js';
import {configTab} from './config.js';

export const TABS = [
  {id: 'overview', label: 'Overview', make: overviewTab},
  {id: 'nodes', label: 'Nodes', make: nodesTab},
  {id: 'jobs', label: 'Jobs', make: jobsTab},
  {id: 'partitions', label: 'Partitions', make: partitionsTab},
  {id: 'volumes', label: 'Volumes', make: volumesTab},
  {id: 'config', label: 'Slurm Configuration', make: configTab},
];

export function clusterView(ctx, name) {
  const base = `#/clusters/${encodeURIComponent(name)}`;
  const statusSlot = h('span', {class: 'head-status'});
  const metaSlot = h('div', {class: 'head-meta muted'});
  const progressSlot = h('div', {testid: 'cluster-progress-slot'});
  const reasonSlot = h('div');
  const bannerSlot = h('div');
  const error = errorLine('cluster-error');
  const tabLinks = TABS.map((t) => h('a', {href: `${base}/${t.id}`, class: 'tab', role: 'tab',
    testid: `tab-${t.id}`}, t.label));
  const content = h('div', {class: 'tab-content', role: 'tabpanel'});
  const nav = h('nav', {class: 'tabs', role: 'tablist'}, tabLinks);
  const gone = h('div', {class: 'banner banner-warn', testid: 'cluster-gone', hidden: true});

  const el = h('section', {class: 'page', testid: 'page-cluster', dataset: {cluster: name}},
    h('div', {class: 'breadcrumb'}, h('a', {href: '#/clusters'}, '← Clusters')),
    h('div', {class: 'page-head'},
      h('h1', {testid: 'cluster-title'}, name), statusSlot, metaSlot),
    gone, error, progressSlot, reasonSlot, bannerSlot,
    nav, content);

  let cluster = null;
  let tab = null;
  let tabId = '';
  let headSig = '';

  // Context handed to the tabs.
  const tabCtx = {
    ...ctx,
    clusterName: name,
    base,
    get cluster() { return cluster; },
  };

  function route(r) {
    const id = TABS.some((t) => t.id === r.tab) ? r.tab : 'overview';
    if (id !== tabId) {
      if (tab && tab.destroy) tab.destroy();
      tabId = id;
      tab = TABS.find((t) => t.id === id).make(tabCtx);
      content.replaceChildren(tab.el);
      tabLinks.forEach((a, i) => {
        const active = TABS[i].id === id;
        a.classList.toggle('active', active);
        a.setAttribute('aria-selected', String(active));
      });
      document.title = `${name} · ${TABS.find((t) => t.id === id).label} · corral`;
    }
    if (tab.route) tab.route(r.item);
  }

  // `failedChangeShown`: a banner already says why the last change failed.
  function renderHeader(failedChangeShown) {
    const sig = JSON.stringify([cluster.status, cluster.phase, cluster.reason, cluster.revision,
      cluster.appliedRevision, cluster.spec, cluster.project, failedChangeShown]);
    if (sig === headSig) return;
    headSig = sig;
    setChildren(statusSlot, statusBadge(cluster.status, 'cluster-status'));
    setChildren(metaSlot,
      cluster.project ? `project ${cluster.project} · ` : '',
      sizeText(cluster.spec),
      ` · revision ${cluster.revision} (applied ${cluster.appliedRevision})`);
    setChildren(progressSlot, progressLine(cluster, 'cluster-progress'));
    // Why a cluster Failed, or what the last failed change did.
    setChildren(reasonSlot, cluster.reason && !(failedChangeShown && cluster.status === 'Running')
      ? h('div', {class: `banner ${cluster.status === 'Failed' ? 'banner-bad' : 'banner-warn'}`,
        testid: 'cluster-reason', role: 'status'}, cluster.reason)
      : null);
  }

  async function refresh() {
    try {
      cluster = await get(clusterPath(name));
      showError(error, null);
      gone.hidden = true;
      nav.hidden = false;
      content.hidden = false;
    } catch (e) {
      if (e.status === 404) {  // Deleted, or never there: nothing else to show.
        gone.hidden = false;
        nav.hidden = true;
        content.hidden = true;
        setChildren(bannerSlot);
        setChildren(reasonSlot);
        bannerSlot.dataset.sig = '';
        setChildren(gone, `No cluster named ${name}: it was deleted, or it belongs to a project ` +
          'you are not in. ',
          h('a', {href: '#/clusters'}, 'Back to the clusters'));
        setChildren(progressSlot);
        return;
      }
      showError(error, e);
      if (e.status === 0) throw e;
      return;
    }
    let entry = followedOf(name);
    try {
      entry = await updateFollowed(name);
    } catch (e) { /* the next poll tries again */ }
    // A failed change's banner says what cluster.reason says; show one.
    renderHeader(entry && entry.state === 'Failed');
    // The Slurm Configuration tab shows the outcome of its own Apply next
    // to the button; the header shows every other change.
    const shown = entry && !(tab && tab.showsChange && tab.showsChange(entry)) ? entry : null;
    const bannerSig = JSON.stringify([shown, cluster.phase]);
    if (bannerSig !== bannerSlot.dataset.sig) {
      bannerSlot.dataset.sig = bannerSig;
      setChildren(bannerSlot, changeBanner(shown, cluster));
    }
    if (tab) await tab.refresh(cluster);
  }

  return {
    el, refresh, route,
    destroy() { if (tab && tab.destroy) tab.destroy(); },
  };
}
