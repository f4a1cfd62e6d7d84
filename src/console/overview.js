// Overview tab: how to log in, the cluster's state, its actions, two charts
// from GET …/metrics and the events.

import {get, clusterPath} from './api.js';
import {
  h, setChildren, copyText, formatTime, formatTimeMs, badge, errorLine, showError,
} from './dom.js';
import {
  actionButton, confirmRestartLogin, confirmReconfigure, openClone, openScale, confirmTerminate,
  confirmDelete, sizeText, imageText, openSetImage, confirmRestartWorkers,
} from './actions.js';
import {chart, NODE_SERIES, QUEUE_SERIES} from './charts.js';

const METRICS_EVERY_MS = 10000;  // corrald samples every 10 s.
const EVENTS_SHOWN = 50;

export function overviewTab(ctx) {
  const loginBody = h('div');
  const detailsBody = h('dl', {class: 'details', testid: 'cluster-details'});
  const actionsBody = h('div', {class: 'actions', testid: 'cluster-actions'});
  const actionsNote = h('div', {class: 'muted', testid: 'actions-note'});
  // What the last scale answered: nodes removed and the jobs on them.
  const scaleNote = h('div', {class: 'muted', testid: 'scale-note'});
  const chartsBody = h('div', {class: 'charts'});
  const chartsError = errorLine('metrics-error');
  const eventsBody = h('tbody');
  const eventsTable = h('table', {class: 'table compact', testid: 'events'},
    h('thead', {}, h('tr', {}, ['Time', 'Type', 'Reason', 'Message'].map((c) => h('th', {}, c)))),
    eventsBody);
  const eventsMore = h('p', {class: 'muted'});
  const eventsError = errorLine('events-error');

  const el = h('div', {class: 'overview', testid: 'tab-panel-overview'},
    h('div', {class: 'grid2'},
      h('section', {class: 'card'}, h('h2', {}, 'Log in'), loginBody),
      h('section', {class: 'card'}, h('h2', {}, 'Cluster'), detailsBody)),
    h('section', {class: 'card'}, h('h2', {}, 'Actions'), actionsBody, actionsNote, scaleNote),
    h('section', {class: 'card'}, h('h2', {}, 'Nodes and queue (last hour)'), chartsError, chartsBody),
    h('section', {class: 'card'}, h('h2', {}, 'Events'), eventsError, eventsTable, eventsMore));

  let loginSig = '';
  let detailsSig = '';
  let actionsSig = '';
  let eventsSig = '';
  let metricsAt = 0;

  function renderLogin(c) {
    const sig = JSON.stringify([c.login, c.status]);
    if (sig === loginSig) return;
    loginSig = sig;
    const address = c.login && c.login.address;
    if (!address) {
      setChildren(loginBody, h('p', {class: 'muted', testid: 'login-address'},
        'The login node has no address yet.'));
      return;
    }
    const port = c.login.port && c.login.port !== 22 ? `-p ${c.login.port} ` : '';
    const command = `ssh ${port}root@${address}`;
    const copied = h('span', {class: 'muted copied', 'aria-live': 'polite'});
    const copy = h('button', {type: 'button', testid: 'copy-ssh', onclick: async () => {
      copied.textContent = (await copyText(command)) ? 'Copied' : 'Copy failed: select the text';
      setTimeout(() => { copied.textContent = ''; }, 2000);
    }}, 'Copy');
    setChildren(loginBody,
      h('p', {}, 'Login node ', h('code', {testid: 'login-address'}, address),
        c.status === 'Running' ? '' : h('span', {class: 'muted'}, ` (ssh needs a Running cluster; it is ${c.status})`)),
      h('div', {class: 'ssh-line'}, h('code', {testid: 'ssh-command'}, command), copy, copied),
      h('p', {class: 'muted'}, 'Submit jobs from the login node with sbatch or srun; keep scripts ' +
        'and output on /shared or a volume, not in /root.'),
      c.login.hostKey ? h('details', {}, h('summary', {}, 'Host key'),
        h('code', {class: 'wrap', testid: 'host-key'}, c.login.hostKey)) : null);
  }

  function renderDetails(c) {
    const sig = JSON.stringify([c.status, c.phase, c.reason, c.revision, c.appliedRevision, c.spec,
      c.subnet, c.updatedAt, c.project]);
    if (sig === detailsSig) return;
    detailsSig = sig;
    const row = (k, v, testid) => [h('dt', {}, k), h('dd', {testid}, v)];
    setChildren(detailsBody,
      row('Status', c.status, 'detail-status'),
      row('Phase', c.phase || '-', 'detail-phase'),
      row('Reason', c.reason || '-', 'detail-reason'),
      row('Revision', `${c.revision} (applied: ${c.appliedRevision})`, 'detail-revision'),
      row('Project', c.project || '-'),
      row('Image', imageText(c.spec), 'detail-image'),
      row('Size', sizeText(c.spec)),
      row('Subnet', c.subnet || '-'),
      row('Platform partitions', (c.platformPartitions || []).join(', ') || '-'),
      row('Created', formatTime(c.createdAt)),
      row('Updated', formatTime(c.updatedAt)));
  }

  function renderActions(c) {
    const sig = JSON.stringify([c.status, c.actions, c.spec.gpuNodes, c.spec.cpuNodes]);
    if (sig === actionsSig) return;
    actionsSig = sig;
    const refresh = () => ctx.refreshNow();
    setChildren(actionsBody,
      actionButton(c, 'loginRestart', 'Restart Login Service', () => confirmRestartLogin(c, refresh)),
      actionButton(c, 'reconfigure', 'Reconfigure Cluster', () => confirmReconfigure(c, refresh)),
      actionButton(c, 'setImage', 'Change Image…', () => openSetImage(c, refresh)),
      actionButton(c, 'restartWorkers', 'Restart Workers', () => confirmRestartWorkers(c, refresh)),
      actionButton(c, 'scale', 'Scale…', () => openScale(c, (answer) => {
        scaleNote.replaceChildren(...scaleSummary(answer));
        refresh();
      })),
      actionButton(c, 'clone', 'Clone…', () => openClone(c, ctx.navigate)),
      actionButton(c, 'terminate', 'Terminate', () => confirmTerminate(c, refresh), {kind: 'danger'}),
      actionButton(c, 'delete', 'Delete', () => confirmDelete(c, () => {
        ctx.flash(`Cluster ${c.name} is being deleted.`);
        ctx.navigate('#/clusters');
      }), {kind: 'danger'}));
    actionsNote.textContent = {
      Creating: 'While the cluster is Creating you can only reconfigure it (if it stalls) or delete it.',
      Failed: 'Creation did not complete: clone it into a new cluster, then delete this record.',
      Terminated: 'A terminated cluster can only be cloned or deleted.',
      Terminating: 'The cluster is shutting down; it can be cloned or deleted.',
      Deleting: 'The cluster is being removed.',
    }[c.status] || '';
  }

  // Lines about a scale-down, from the Change corrald answered.
  function scaleSummary(answer) {
    if (!answer || !answer.removedNodes) return [];
    const jobs = answer.jobsOnRemovedNodes || [];
    return [
      h('p', {}, `Removing ${answer.removedNodes}. Jobs on them: ${answer.jobsWillBe}.`),
      jobs.length ? h('pre', {class: 'diff'}, jobs.join('\n')) : null,
      (answer.emptiedPartitions || []).length
        ? h('p', {}, `Partitions left without nodes: ${answer.emptiedPartitions.join(', ')}.`) : null,
    ];
  }

  async function refreshEvents(c) {
    try {
      const data = await get(clusterPath(c.name, 'events'));
      showError(eventsError, null);
      const events = data.events || [];
      const last = events[events.length - 1];
      const sig = `${events.length}|${last ? last.time + last.message : ''}`;
      if (sig === eventsSig) return;
      eventsSig = sig;
      // Newest first.
      const shown = events.slice(-EVENTS_SHOWN).reverse();
      eventsBody.replaceChildren(...shown.map((e) => h('tr', {},
        h('td', {class: 'nowrap'}, formatTimeMs(e.time)),
        h('td', {}, badge(e.type, e.type === 'Warning' ? 'warn' : 'off')),
        h('td', {}, e.reason),
        h('td', {class: 'wrap'}, e.message))));
      eventsMore.textContent = events.length > EVENTS_SHOWN
        ? `Showing the newest ${EVENTS_SHOWN} of ${events.length} events.`
        : events.length === 0 ? 'No events yet.' : '';
    } catch (e) {
      showError(eventsError, e);
    }
  }

  async function refreshMetrics(c) {
    if (Date.now() - metricsAt < METRICS_EVERY_MS) return;
    metricsAt = Date.now();
    try {
      const data = await get(clusterPath(c.name, 'metrics'));
      showError(chartsError, null);
      const samples = data.samples || [];
      setChildren(chartsBody,
        chart({title: 'Node states', testid: 'chart-nodes', samples, pick: (s) => s.nodes,
          series: NODE_SERIES, stacked: true, periodSeconds: data.periodSeconds}),
        chart({title: 'Queue: pending and running jobs', testid: 'chart-queue', samples,
          pick: (s) => s.jobs, series: QUEUE_SERIES, stacked: false,
          periodSeconds: data.periodSeconds}));
    } catch (e) {
      if (e.status === 409) {  // Not Running: no samples to show.
        showError(chartsError, null);
        setChildren(chartsBody, h('p', {class: 'muted', testid: 'metrics-note'}, e.message));
      } else {
        showError(chartsError, e);
      }
    }
  }

  async function refresh(c) {
    renderLogin(c);
    renderDetails(c);
    renderActions(c);
    await Promise.all([refreshEvents(c), refreshMetrics(c)]);
  }

  return {el, refresh};
}
