// What the cluster list and the cluster page share: progress text, action
// buttons that show why they are disabled, the cluster-wide actions
// (clone, scale, terminate, delete, ...) and following a change until its
// revision is Applied or Failed.

import {api, get, post, del, clusterPath} from './api.js';
import {h, spinner, openDialog, field} from './dom.js';

// ---- Status and progress ----

const BUSY_STATUSES = ['Creating', 'Deleting', 'Terminating'];

// What a cluster is working on, or '' when it is at rest: a create, delete or
// terminate in progress, or a change (revision > appliedRevision) being applied.
export function progressOf(cluster) {
  if (BUSY_STATUSES.includes(cluster.status)) {
    return `${cluster.status}: ${cluster.phase || 'queued'}`;
  }
  if (cluster.status === 'Running' && cluster.revision > cluster.appliedRevision) {
    return `Applying revision ${cluster.revision}` + (cluster.phase ? `: ${cluster.phase}` : '');
  }
  return '';
}

// The progress line (spinner + text), or null at rest.
export function progressLine(cluster, testid = 'progress') {
  const text = progressOf(cluster);
  if (!text) return null;
  return h('div', {class: 'progress', testid}, spinner(), h('span', {}, text));
}

export function sizeText(spec) {
  const gpu = `${spec.gpuNodes} GPU node${spec.gpuNodes === 1 ? '' : 's'} × ${spec.gpusPerNode} GPUs`;
  return spec.cpuNodes ? `${gpu}, ${spec.cpuNodes} CPU node${spec.cpuNodes === 1 ? '' : 's'}` : gpu;
}

// {allowed, reason} of `key` in cluster.actions. Keys corrald does not report
// (older servers) fall back to "Running only", the rule for every change.
export function permission(cluster, key) {
  const a = cluster.actions && cluster.actions[key];
  if (a) return a;
  if (cluster.status === 'Running') return {allowed: true};
  return {allowed: false, reason: `the cluster is ${cluster.status}; that is allowed only when a cluster is Running`};
}

// A button for action `key` of `cluster`. Disabled actions keep their reason
// visible: as the tooltip and as small text under the button.
export function actionButton(cluster, key, label, onClick, {testid, kind = ''} = {}) {
  const p = permission(cluster, key);
  const id = testid || `action-${key}`;
  const button = h('button', {
    type: 'button', class: kind, testid: id, disabled: !p.allowed, title: p.allowed ? null : p.reason,
    onclick: (e) => onClick(e.currentTarget),
  }, label);
  return h('span', {class: 'action'}, button,
    p.allowed ? null : h('small', {class: 'reason', testid: `${id}-reason`}, p.reason));
}

// ---- Following a change ----

// cluster name → {revision, message, state, error, rollback}. Kept across
// views so that a change started on one tab is still followed on another.
const followed = new Map();

// Starts following the Change answered by corrald ({change, cluster}).
export function follow(clusterName, answer) {
  const change = answer && answer.change;
  if (!change || !change.made) return null;
  const entry = {revision: change.revision, message: change.message, state: 'Pending', error: ''};
  followed.set(clusterName, entry);
  return entry;
}

export function followedOf(clusterName) {
  return followed.get(clusterName) || null;
}

export function forget(clusterName) {
  followed.delete(clusterName);
}

const FINAL = ['Applied', 'Failed', 'Superseded'];

// Reads GET …/revisions while the followed revision is not final (and once
// more after a failure, until corral's rollback revision is final too).
export async function updateFollowed(clusterName) {
  const entry = followed.get(clusterName);
  if (!entry) return null;
  if (FINAL.includes(entry.state) && (entry.state !== 'Failed' || entry.rollbackDone)) return entry;
  const data = await get(clusterPath(clusterName, 'revisions'));
  const revisions = data.revisions || [];
  const mine = revisions.find((r) => r.revision === entry.revision);
  if (!mine) return entry;
  entry.state = mine.state;
  entry.error = mine.error || '';
  if (mine.state === 'Superseded') {
    // A newer change by someone else carries this one too: follow it (as
    // `corral` does). corral's own rollback revisions are not followed.
    const newer = revisions.filter((r) => r.revision > entry.revision && r.author !== 'corral');
    if (newer.length) {
      const next = newer[newer.length - 1];
      entry.supersededBy = next.revision;
      Object.assign(entry, {revision: next.revision, message: next.message, state: next.state});
    }
  }
  if (entry.state === 'Failed') {
    // corral's rollback: "roll back to revision A after revision N failed".
    const rollback = revisions.find((r) => r.revision > entry.revision && r.author === 'corral');
    if (rollback) {
      entry.rollback = {revision: rollback.revision, message: rollback.message, state: rollback.state};
      entry.rollbackDone = FINAL.includes(rollback.state);
    }
  }
  return entry;
}

// The banner for a followed change: in progress, applied, or failed and
// rolled back (with corrald's error and the cluster's reason).
export function changeBanner(entry, cluster, testid = 'change-status') {
  if (!entry) return null;
  const title = `Revision ${entry.revision} (${entry.message})`;
  if (entry.state === 'Applied') {
    return h('div', {class: 'banner banner-ok', testid, dataset: {state: 'Applied'}},
      `${title} applied.`);
  }
  if (entry.state === 'Failed') {
    const rb = entry.rollback;
    return h('div', {class: 'banner banner-bad', testid, role: 'alert', dataset: {state: 'Failed'}},
      h('strong', {}, `${title} failed and was rolled back.`),
      entry.error ? h('div', {class: 'banner-detail', testid: `${testid}-error`}, entry.error) : null,
      rb ? h('div', {class: 'banner-detail', testid: `${testid}-rollback`},
        `corral ${rb.state === 'Applied' ? 'restored' : 'is restoring'} the last applied spec: ` +
        `revision ${rb.revision} (${rb.message}) is ${rb.state}.`) : null);
  }
  if (entry.state === 'Superseded') {
    return h('div', {class: 'banner banner-warn', testid, dataset: {state: 'Superseded'}},
      `${title} was superseded by a newer change before it was applied.`);
  }
  return h('div', {class: 'banner banner-busy', testid, dataset: {state: 'Pending'}},
    spinner(), ` ${title}: applying` + (cluster && cluster.phase ? ` — ${cluster.phase}` : '…'));
}

// ---- Cluster-wide actions ----

// POSTs a change and starts following it.
export async function changeAction(clusterName, method, path, body) {
  const answer = await api(method, path, body);
  follow(clusterName, answer);
  return answer;
}

export function confirmRestartLogin(cluster, onDone) {
  return openDialog({
    title: `Restart the login service of ${cluster.name}?`,
    body: [h('p', {}, 'The login pod is recreated: open SSH sessions end and its /root is emptied. ' +
      'Jobs keep running; files on /shared and on volumes stay.')],
    confirmLabel: 'Restart login service',
    onConfirm: async () => {
      await changeAction(cluster.name, 'POST', clusterPath(cluster.name, 'login', 'restart'));
      onDone && onDone();
    },
  });
}

export function confirmReconfigure(cluster, onDone) {
  return openDialog({
    title: `Reconfigure ${cluster.name}?`,
    body: [h('p', {}, 'corral renders every file again from the current revision and reconciles ' +
      'the pods. Use it when a create stalls or something drifted; it changes nothing you set.')],
    confirmLabel: 'Reconfigure cluster',
    onConfirm: async () => {
      await changeAction(cluster.name, 'POST', clusterPath(cluster.name, 'reconfigure'));
      onDone && onDone();
    },
  });
}

export function openScale(cluster, onDone) {
  const gpu = h('input', {type: 'number', min: 0, max: 200, value: cluster.spec.gpuNodes, testid: 'scale-gpu-nodes'});
  const cpu = h('input', {type: 'number', min: 0, max: 8, value: cluster.spec.cpuNodes, testid: 'scale-cpu-nodes'});
  const force = h('input', {type: 'checkbox', testid: 'scale-force'});
  return openDialog({
    title: `Scale ${cluster.name}`,
    body: [
      field('GPU nodes', gpu),
      field('CPU nodes', cpu, 'at most 8'),
      h('label', {class: 'check'}, force,
        ' Cancel jobs on nodes that are removed (otherwise corral waits for them)'),
      h('p', {class: 'muted'}, 'Scaling down removes the highest-numbered nodes first. ' +
        'Scaling up adds the next ordinals.'),
    ],
    confirmLabel: 'Scale',
    onConfirm: async () => {
      const body = {gpuNodes: Number(gpu.value), cpuNodes: Number(cpu.value)};
      if (force.checked) body.force = true;
      const answer = await changeAction(cluster.name, 'POST', clusterPath(cluster.name, 'scale'), body);
      onDone && onDone(answer);
    },
  });
}

// "debian13-slurm24.11 (Slurm 24.11)", or '-'.
export function imageText(spec) {
  const i = spec && spec.image;
  return i && i.name ? `${i.name} (Slurm ${i.slurmVersion})` : '-';
}

// An <option> per cluster image, the cluster's own (or the default) selected.
export async function imageOptions(select, selected) {
  const data = await get('/api/v1/images');
  const chosen = selected || data.default;
  select.replaceChildren(...(data.images || []).map((i) => h('option',
    {value: i.name, selected: i.name === chosen},
    `${i.name} (Slurm ${i.slurmVersion}, ${i.os}${i.built ? '' : ', built at first use'})`)));
  return data;
}

export function openSetImage(cluster, onDone) {
  const image = h('select', {testid: 'set-image-name'});
  const loading = imageOptions(image, cluster.spec.image && cluster.spec.image.name);
  return openDialog({
    title: `Change the image of ${cluster.name}`,
    body: [
      field('Image', image, 'the Slurm stack every node runs'),
      h('p', {class: 'muted'}, 'The controller and login node are recreated on it; each worker is ' +
        'drained and recreated once its jobs end, then back in service. No job is killed, but local ' +
        'files of every pod (anything outside /shared and volumes) go. A Slurm release the cluster ' +
        'cannot upgrade to in place is refused, and nothing changes.'),
    ],
    confirmLabel: 'Change image',
    onConfirm: async () => {
      await loading;
      await changeAction(cluster.name, 'POST', clusterPath(cluster.name, 'image'), {image: image.value});
      onDone && onDone();
    },
  });
}

export function confirmRestartWorkers(cluster, onDone) {
  return openDialog({
    title: `Restart the workers of ${cluster.name}?`,
    body: [h('p', {}, 'Every worker is drained and recreated once its jobs have ended, then back in ' +
      'service: no job is killed. Their local files go; /shared and volumes stay.')],
    confirmLabel: 'Restart workers',
    onConfirm: async () => {
      await changeAction(cluster.name, 'POST', clusterPath(cluster.name, 'workers', 'restart'));
      onDone && onDone();
    },
  });
}

export function openClone(cluster, navigate) {
  const name = h('input', {type: 'text', required: true, testid: 'clone-name',
    pattern: '[a-z]([a-z0-9-]{0,38}[a-z0-9])?', value: `${cluster.name}-2`.slice(0, 40)});
  return openDialog({
    title: `Clone ${cluster.name}`,
    body: [
      field('Name of the new cluster', name, '1-40 lowercase letters, digits and \'-\''),
      h('p', {class: 'muted'}, 'The clone gets this cluster\'s spec (size, partitions, Slurm settings, ' +
        'SSH keys) and project, with a new subnet, an empty /shared and no job history.'),
    ],
    confirmLabel: 'Clone',
    onConfirm: async () => {
      const created = await post(clusterPath(cluster.name, 'clone'), {name: name.value.trim()});
      navigate(`#/clusters/${encodeURIComponent(created.name)}`);
    },
  });
}

export function confirmTerminate(cluster, onDone) {
  return openDialog({
    title: `Terminate ${cluster.name}?`,
    body: [h('p', {}, 'Every pod is stopped, and running jobs end. The record, /shared, the Slurm ' +
      'state and the accounting database are kept: you can clone the cluster later, or delete it.')],
    confirmLabel: 'Terminate',
    danger: true,
    onConfirm: async () => {
      await post(clusterPath(cluster.name, 'terminate'));
      onDone && onDone();
    },
  });
}

export function confirmDelete(cluster, onDone) {
  return openDialog({
    title: `Delete ${cluster.name}?`,
    body: [h('p', {}, 'Every pod is stopped and the cluster is removed with its network, its files, ' +
      'its /shared, its events and its history. Copy off anything you want to keep first. ' +
      'Attached volumes are kept.')],
    confirmLabel: 'Delete cluster',
    danger: true,
    onConfirm: async () => {
      await del(clusterPath(cluster.name));
      forget(cluster.name);
      onDone && onDone();
    },
  });
}

