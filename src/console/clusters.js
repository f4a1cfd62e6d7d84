// The cluster list (#/clusters) and the create form (#/create).

import {get, post} from './api.js';
import {h, keyedRows, statusBadge, formatAge, errorLine, showError, runAction, field} from './dom.js';
import {
  progressLine, sizeText, actionButton, openClone, confirmTerminate, confirmDelete, imageText,
  imageOptions,
} from './actions.js';

export function clusterListView(ctx) {
  const tbody = h('tbody', {testid: 'cluster-rows'});
  const table = h('table', {class: 'table', testid: 'cluster-list'},
    h('thead', {}, h('tr', {},
      ['Name', 'Project', 'Status', 'Image', 'Size', 'Login', 'Age', 'Actions'].map((c) => h('th', {}, c)))),
    tbody);
  const empty = h('p', {class: 'empty', testid: 'cluster-list-empty', hidden: true},
    'No clusters yet. ', h('a', {href: '#/create'}, 'Create one'), '.');
  const error = errorLine('cluster-list-error');
  const flash = ctx.takeFlash();

  const el = h('section', {class: 'page', testid: 'page-clusters'},
    h('div', {class: 'page-head'},
      h('h1', {}, 'Clusters'),
      h('a', {href: '#/create', class: 'button primary', testid: 'new-cluster'}, 'New cluster')),
    flash ? h('div', {class: 'banner banner-ok', testid: 'flash'}, flash) : null,
    error, table, empty);

  // Re-renders a row after an action without waiting for the next poll.
  const refreshSoon = () => ctx.refreshNow();

  function row(c) {
    return h('tr', {testid: `cluster-row-${c.name}`, dataset: {status: c.status}},
      h('td', {}, h('a', {href: `#/clusters/${encodeURIComponent(c.name)}`, class: 'cluster-link',
        testid: 'cluster-link'}, c.name)),
      h('td', {}, c.project || '-'),
      h('td', {class: 'status-cell'},
        statusBadge(c.status, 'status'),
        progressLine(c),
        c.reason ? h('div', {class: 'reason-text', testid: 'reason'}, c.reason) : null),
      h('td', {testid: 'cluster-image'}, imageText(c.spec)),
      h('td', {}, sizeText(c.spec)),
      h('td', {class: 'mono'}, c.login && c.login.address ? c.login.address : '-'),
      h('td', {}, formatAge(c.createdAt)),
      h('td', {class: 'actions-cell'},
        actionButton(c, 'clone', 'Clone…', () => openClone(c, ctx.navigate)),
        actionButton(c, 'terminate', 'Terminate', () => confirmTerminate(c, refreshSoon)),
        actionButton(c, 'delete', 'Delete', () => confirmDelete(c, refreshSoon), {kind: 'danger'})));
  }

  async function refresh() {
    try {
      const data = await get('/api/v1/clusters');
      const clusters = (data.clusters || []).slice().sort((a, b) => a.name.localeCompare(b.name));
      showError(error, null);
      keyedRows(tbody, clusters, (c) => c.name, row, (c) => JSON.stringify(c) + formatAge(c.createdAt));
      empty.hidden = clusters.length > 0;
      table.hidden = clusters.length === 0;
    } catch (e) {
      showError(error, e);
      if (e.status === 0) throw e;
    }
  }

  return {el, refresh};
}

// Cluster names: DNS-style, as corrald checks them.
const NAME_RE = /^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$/;

export function createView(ctx) {
  const projects = ctx.whoami.projects && ctx.whoami.projects.length ? ctx.whoami.projects
    : (ctx.whoami.admin ? ['default'] : []);
  const name = h('input', {type: 'text', testid: 'create-name', required: true, autocomplete: 'off',
    placeholder: 'e.g. train'});
  const project = h('select', {testid: 'create-project'},
    projects.map((p) => h('option', {value: p}, p)));
  const image = h('select', {testid: 'create-image'});
  const imagesLoaded = imageOptions(image).catch(() => null);
  const gpuNodes = h('input', {type: 'number', min: 0, max: 200, value: 4, testid: 'create-gpu-nodes'});
  const gpusPerNode = h('input', {type: 'number', min: 1, max: 16, value: 8, testid: 'create-gpus-per-node'});
  const cpuNodes = h('input', {type: 'number', min: 0, max: 8, value: 0, testid: 'create-cpu-nodes'});
  const sshKeys = h('textarea', {rows: 4, testid: 'create-ssh-keys', spellcheck: 'false',
    placeholder: 'ssh-ed25519 AAAA… you@laptop (one key per line)'});
  const registry = h('input', {type: 'checkbox', testid: 'create-registry'});
  const submit = h('button', {type: 'submit', class: 'primary', testid: 'create-submit'}, 'Create cluster');
  const error = errorLine('create-error');

  const form = h('form', {class: 'form card', testid: 'create-form', novalidate: true},
    field('Name', name, '1-40 lowercase letters, digits and \'-\', starting with a letter'),
    field('Project', project, projects.length ? null : 'you belong to no project; ask an administrator'),
    field('Image', image, 'the Slurm stack every node runs; not your jobs\' container images'),
    h('div', {class: 'row'},
      field('GPU nodes', gpuNodes, 'slinky-0 … slinky-(N-1)'),
      field('GPUs per node', gpusPerNode),
      field('CPU nodes', cpuNodes, 'cpu-workers-0 …, at most 8')),
    field('SSH public keys for root', sshKeys, 'installed for root on the login node'),
    h('label', {class: 'check'}, registry,
      ' Run a container registry (registry:5000 to jobs, for --container-image)'),
    error,
    h('div', {class: 'form-buttons'},
      h('a', {href: '#/clusters', class: 'button'}, 'Cancel'), submit));

  // Client-side checks: the same rules corrald applies, for a quicker answer.
  function validate() {
    const n = name.value.trim();
    if (!NAME_RE.test(n)) {
      return `invalid cluster name "${n}": use 1-40 lowercase letters, digits and '-', starting with a letter and not ending with '-'`;
    }
    const g = Number(gpuNodes.value), c = Number(cpuNodes.value), p = Number(gpusPerNode.value);
    if (!Number.isInteger(g) || g < 0 || g > 200) return 'GPU nodes must be between 0 and 200';
    if (!Number.isInteger(c) || c < 0 || c > 8) return 'CPU nodes must be between 0 and 8';
    if (!Number.isInteger(p) || p < 1 || p > 16) return 'GPUs per node must be between 1 and 16';
    if (g + c === 0) return 'a cluster needs at least one node: set GPU nodes or CPU nodes';
    return '';
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    runAction(submit, error, async () => {
      const problem = validate();
      if (problem) throw new Error(problem);
      const keys = sshKeys.value.split('\n').map((k) => k.trim()).filter(Boolean);
      const body = {
        name: name.value.trim(),
        gpuNodes: Number(gpuNodes.value),
        gpusPerNode: Number(gpusPerNode.value),
        cpuNodes: Number(cpuNodes.value),
        sshKeys: keys,
        containers: {registry: registry.checked},
      };
      if (project.value) body.project = project.value;
      await imagesLoaded;
      if (image.value) body.image = image.value;
      const created = await post('/api/v1/clusters', body);
      ctx.flash(`Cluster ${created.name} is being created; it appears as Running when every node has registered with Slurm.`);
      ctx.navigate('#/clusters');
    });
  });

  const el = h('section', {class: 'page', testid: 'page-create'},
    h('div', {class: 'page-head'}, h('h1', {}, 'New cluster')),
    h('p', {class: 'muted'}, 'A genuine Slurm cluster: a login node, a controller (slurmctld, ' +
      'slurmdbd) and one worker per node. Creation takes about a minute.'),
    form);
  return {el, refresh: async () => {}};
}


