// Partitions tab (Manage partitions): the platform's partitions, read-only,
// and the user's own, which can be added, edited and deleted (at most 20).

import {get, clusterPath, query} from './api.js';
import {
  h, setChildren, keyedRows, badge, formatOptions, errorLine, showError, runAction, field, openDialog,
} from './dom.js';
import {permission, changeAction} from './actions.js';
import {loadParams, parseSettings} from './params.js';

const NAME_RE = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

export function partitionsTab(ctx) {
  const tbody = h('tbody');
  const table = h('table', {class: 'table', testid: 'partitions'},
    h('thead', {}, h('tr', {},
      ['Name', 'Nodes', 'Default', 'Managed by', 'Options', ''].map((c) => h('th', {}, c)))),
    tbody);
  const count = h('p', {class: 'count', testid: 'partition-count'});
  const error = errorLine('partitions-error');

  // The add / edit form.
  const formTitle = h('h2', {}, 'Add a partition');
  const name = h('input', {type: 'text', testid: 'partition-name', placeholder: 'e.g. short',
    autocomplete: 'off'});
  const nodes = h('input', {type: 'text', testid: 'partition-nodes', placeholder: 'e.g. slinky-[0-1]',
    autocomplete: 'off', spellcheck: 'false'});
  const nodesHint = h('small', {class: 'hint', testid: 'partition-nodes-hint'});
  const options = h('textarea', {rows: 3, testid: 'partition-options', spellcheck: 'false',
    placeholder: 'Key=Value, one per line or separated by blanks, e.g. MaxTime=30'});
  const submit = h('button', {type: 'submit', class: 'primary', testid: 'partition-submit'}, 'Add partition');
  const cancel = h('button', {type: 'button', testid: 'partition-cancel', hidden: true}, 'Cancel editing');
  const formError = errorLine('partition-error');
  const formNote = h('div', {class: 'muted', testid: 'partition-note'});
  const submitReason = h('small', {class: 'reason', testid: 'partition-submit-reason', hidden: true});
  const paramHelp = h('details', {class: 'param-help'},
    h('summary', {}, 'Options you can set'), h('div', {testid: 'partition-params'}));
  const form = h('form', {class: 'form card', testid: 'partition-form', novalidate: true},
    formTitle,
    h('div', {class: 'row'}, field('Name', name), h('label', {class: 'field grow'},
      h('span', {class: 'field-caption'}, 'Nodes in this partition'), nodes, nodesHint)),
    field('Options', options), paramHelp,
    formError, formNote,
    h('div', {class: 'form-buttons'}, cancel, submit, submitReason));

  const el = h('div', {testid: 'tab-panel-partitions'},
    h('p', {class: 'muted'}, 'A partition is a named queue over a set of nodes. corral manages ',
      h('code', {}, 'all'), ' (every node, the default), ', h('code', {}, 'slinky'), ' and ',
      h('code', {}, 'cpu-workers'), '; add up to 20 of your own for different time limits or teams. ',
      'Nodes take a Slurm hostlist: slinky-[0-3], slinky-[0-1,5].'),
    error, count, table, form);

  let cluster = null;
  let editing = '';        // Name of the user partition being edited, '' when adding.
  let atLimit = false;
  let partitionDefs = [];

  loadParams().then((p) => {
    partitionDefs = p.partition || [];
    setChildren(paramHelp.lastChild, h('table', {class: 'table compact'},
      h('thead', {}, h('tr', {}, ['Option', 'Type', 'Help'].map((c) => h('th', {}, c)))),
      h('tbody', {}, partitionDefs.map((d) => h('tr', {},
        h('td', {class: 'mono'}, d.name), h('td', {}, d.type), h('td', {class: 'wrap'}, d.help))))));
  }).catch((e) => showError(formError, e));

  function row(p, allowed) {
    const user = p.managedBy === 'user';
    return h('tr', {testid: `partition-row-${p.name}`, dataset: {managedBy: p.managedBy}},
      h('td', {class: 'mono'}, p.name, p.default ? '*' : ''),
      h('td', {class: 'mono', testid: 'nodes'}, p.nodes),
      h('td', {}, p.default ? 'yes' : 'no'),
      h('td', {}, badge(p.managedBy, user ? 'busy' : 'off', 'managed-by')),
      h('td', {class: 'mono wrap', testid: 'options'}, formatOptions(p.options)),
      h('td', {class: 'actions-cell'}, user
        ? [h('button', {type: 'button', testid: 'partition-edit', disabled: !allowed.allowed,
          title: allowed.reason, onclick: () => startEdit(p)}, 'Edit'),
        h('button', {type: 'button', class: 'danger', testid: 'partition-delete',
          disabled: !allowed.allowed, title: allowed.reason, onclick: () => confirmDelete(p)}, 'Delete')]
        : h('small', {class: 'muted', testid: 'read-only'}, 'managed by corral (read-only)')));
  }

  function startEdit(p) {
    editing = p.name;
    formTitle.textContent = `Edit partition ${p.name}`;
    name.value = p.name;
    name.readOnly = true;
    nodes.value = p.nodes;
    options.value = Object.entries(p.options || {}).map(([k, v]) => `${k}=${v}`).join('\n');
    submit.textContent = 'Save partition';
    cancel.hidden = false;
    showError(formError, null);
    updateSubmit();
    form.scrollIntoView({block: 'nearest'});
  }

  function stopEdit() {
    editing = '';
    formTitle.textContent = 'Add a partition';
    name.readOnly = false;
    name.value = '';
    nodes.value = '';
    options.value = '';
    submit.textContent = 'Add partition';
    cancel.hidden = true;
    updateSubmit();
  }
  cancel.addEventListener('click', stopEdit);

  // Disabled with the reason when the status forbids it or the limit is reached.
  function updateSubmit() {
    const p = cluster ? permission(cluster, 'partitions') : {allowed: false, reason: 'loading…'};
    let reason = p.allowed ? '' : p.reason;
    if (!reason && atLimit && !editing) {
      reason = 'a cluster can have at most 20 partitions of its own; delete one first';
    }
    submit.disabled = !!reason;
    submit.title = reason;
    submitReason.hidden = !reason;
    submitReason.textContent = reason;
  }

  // `jobsMessage`: corrald's refusal because of jobs; the dialog then offers
  // the forced delete.
  function confirmDelete(p, jobsMessage = '') {
    const force = !!jobsMessage;
    return openDialog({
      title: `Delete partition ${p.name}?`,
      body: force
        ? [h('p', {class: 'error-line', testid: 'partition-jobs'}, jobsMessage),
          h('p', {}, 'Delete it anyway? Running jobs keep running; pending jobs in it are left ' +
            'without a partition and fail.')]
        : [h('p', {}, 'Slurm stops accepting jobs for it. A partition with pending or running jobs ' +
          'is not deleted unless you force it.')],
      confirmLabel: force ? 'Delete anyway' : 'Delete partition',
      danger: true,
      onConfirm: async () => {
        try {
          await changeAction(ctx.clusterName, 'DELETE',
            clusterPath(ctx.clusterName, 'partitions', p.name) + query({force: force ? 'true' : ''}));
        } catch (e) {
          // Jobs in it: offer the forced delete next.
          if (e.status === 409 && !force && /jobs/.test(e.message)) {
            setTimeout(() => confirmDelete(p, e.message), 0);
            return;
          }
          throw e;
        }
        if (editing === p.name) stopEdit();
        ctx.refreshNow();
      },
    });
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    formNote.textContent = '';
    runAction(submit, formError, async () => {
      const n = name.value.trim();
      if (!editing && !NAME_RE.test(n)) {
        throw new Error(`invalid partition name "${n}": use 1-32 letters, digits, '-' and '_', starting with a letter`);
      }
      if (!editing && (cluster.platformPartitions || []).concat(['all', 'slinky', 'cpu-workers']).includes(n)) {
        throw new Error(`partition "${n}" is managed by corral; choose another name`);
      }
      const hostlist = nodes.value.trim();
      if (!hostlist || /\s/.test(hostlist)) {
        throw new Error('a partition needs nodes, as a Slurm hostlist such as slinky-[0-1,5]');
      }
      const opts = parseSettings(options.value, partitionDefs, 'a partition option');
      // PUT replaces the partition; POST adds one.
      const answer = editing
        ? await changeAction(ctx.clusterName, 'PUT', clusterPath(ctx.clusterName, 'partitions', editing),
          {nodes: hostlist, options: opts})
        : await changeAction(ctx.clusterName, 'POST', clusterPath(ctx.clusterName, 'partitions'),
          {name: n, nodes: hostlist, options: opts});
      // Progress shows at the top of the page; say so only when nothing changed.
      formNote.textContent = answer.change && answer.change.made ? '' : 'Nothing to change.';
      stopEdit();
      ctx.refreshNow();
    });
  });

  async function refresh(c) {
    cluster = c;
    const gpu = c.spec.gpuNodes ? `slinky-[0-${c.spec.gpuNodes - 1}]` : '';
    const cpu = c.spec.cpuNodes ? `cpu-workers-[0-${c.spec.cpuNodes - 1}]` : '';
    nodesHint.textContent = `This cluster has ${[gpu, cpu].filter(Boolean).join(' and ') || 'no nodes'}.`;
    try {
      const data = await get(clusterPath(c.name, 'partitions'));
      showError(error, null);
      const allowed = permission(c, 'partitions');
      keyedRows(tbody, data.partitions || [], (p) => p.name, (p) => row(p, allowed),
        (p) => JSON.stringify([p, allowed]));
      count.textContent = `${data.userPartitions} of ${data.limit} user partitions`;
      atLimit = data.userPartitions >= data.limit;
    } catch (e) {
      showError(error, e);
      if (e.status === 0) throw e;
    }
    updateSubmit();
  }

  return {el, refresh};
}
