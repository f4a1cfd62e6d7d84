// Volumes tab: volumes attached to this cluster (mounted at the same path on
// the login node and every worker), and the project's other volumes, which
// can be attached. A small form creates a new volume.

import {get, post, clusterPath} from './api.js';
import {
  h, keyedRows, badge, errorLine, showError, runAction, field, openDialog,
} from './dom.js';
import {permission, changeAction} from './actions.js';

// Where a volume of each type is usually mounted.
function defaultPath(v) {
  return {pfs: '/pfs', sfs: '/sfs', weka: '/weka', dataset: `/datasets/${v.name}`}[v.type] || `/${v.name}`;
}

export function volumesTab(ctx) {
  const attachedBody = h('tbody');
  const attachedTable = h('table', {class: 'table', testid: 'volumes-attached'},
    h('thead', {}, h('tr', {}, ['Volume', 'Mounted at', 'Host path', 'Access', ''].map((c) => h('th', {}, c)))),
    attachedBody);
  const attachedEmpty = h('p', {class: 'muted', testid: 'volumes-attached-empty'},
    'No volumes attached. Files on /shared live as long as the cluster; attach a volume for data ' +
    'that must outlive it.');
  const availableBody = h('tbody');
  const availableTable = h('table', {class: 'table', testid: 'volumes-available'},
    h('thead', {}, h('tr', {}, ['Volume', 'Type', 'Host path', 'Attached to', 'Attach at'].map((c) => h('th', {}, c)))),
    availableBody);
  const availableEmpty = h('p', {class: 'muted', testid: 'volumes-available-empty'});
  const error = errorLine('volumes-error');
  const attachError = errorLine('volume-attach-error');
  const note = h('div', {class: 'muted', testid: 'volume-note'});

  const newName = h('input', {type: 'text', testid: 'volume-new-name', placeholder: 'e.g. pfs1', autocomplete: 'off'});
  const newType = h('select', {testid: 'volume-new-type'},
    [['pfs', 'PFS'], ['sfs', 'SFS'], ['weka', 'Weka'], ['dataset', 'dataset (read-only in the cluster)']]
      .map(([v, label]) => h('option', {value: v}, label)));
  const createButton = h('button', {type: 'submit', testid: 'volume-create'}, 'Create volume');
  const createError = errorLine('volume-create-error');
  const createForm = h('form', {class: 'form card', testid: 'volume-create-form', novalidate: true},
    h('h2', {}, 'New volume'),
    h('div', {class: 'row'}, field('Name', newName), field('Type', newType), createButton),
    createError);

  const el = h('div', {testid: 'tab-panel-volumes'},
    h('p', {class: 'muted'}, 'A volume is mounted at the same path on the login node and every ' +
      'worker, and outlives the cluster. Dataset volumes are read-only. Running pods get an ' +
      'attached volume at once: new jobs see it, a job already running keeps its own mounts.'),
    error,
    h('section', {class: 'card'}, h('h2', {}, 'Attached'), attachedTable, attachedEmpty),
    h('section', {class: 'card'}, h('h2', {}, 'Available in this project'), attachError, note,
      availableTable, availableEmpty),
    createForm);

  let cluster = null;

  function attachedRow(v, allowed) {
    return h('tr', {testid: `volume-attached-${v.volume}`},
      h('td', {class: 'mono'}, v.volume),
      h('td', {class: 'mono'}, v.path),
      h('td', {class: 'mono muted'}, v.hostPath),
      h('td', {}, v.readOnly ? badge('read-only', 'off') : badge('read-write', 'ok')),
      h('td', {class: 'actions-cell'},
        h('button', {type: 'button', testid: 'volume-detach', disabled: !allowed.allowed,
          title: allowed.reason, onclick: () => confirmDetach(v)}, 'Detach'),
        allowed.allowed ? null : h('small', {class: 'reason'}, allowed.reason)));
  }

  function availableRow(v, allowed) {
    const path = h('input', {type: 'text', value: defaultPath(v), size: 14, testid: 'volume-path'});
    const attach = h('button', {type: 'button', testid: 'volume-attach', disabled: !allowed.allowed,
      title: allowed.reason}, 'Attach');
    attach.addEventListener('click', () => runAction(attach, attachError, async () => {
      const p = path.value.trim();
      if (!p.startsWith('/') || /\s/.test(p)) throw new Error('the mount path must be an absolute path without blanks');
      const answer = await changeAction(ctx.clusterName, 'POST', clusterPath(ctx.clusterName, 'volumes'),
        {volume: v.name, path: p});
      note.textContent = answer.change && answer.change.made ? '' : 'Nothing to change.';
      ctx.refreshNow();
    }));
    return h('tr', {testid: `volume-available-${v.name}`},
      h('td', {class: 'mono'}, v.name),
      h('td', {}, v.type),
      h('td', {class: 'mono muted'}, v.hostPath),
      h('td', {class: 'mono'}, (v.attachedTo || []).join(', ') || '-'),
      h('td', {class: 'actions-cell'}, path, attach));
  }

  function confirmDetach(v) {
    return openDialog({
      title: `Detach ${v.volume} from ${ctx.clusterName}?`,
      body: [h('p', {}, `${v.path} disappears from the login node and every worker; the volume and ` +
        'its files are kept and can be attached again.')],
      confirmLabel: 'Detach',
      danger: true,
      onConfirm: async () => {
        await changeAction(ctx.clusterName, 'DELETE', clusterPath(ctx.clusterName, 'volumes', v.volume));
        ctx.refreshNow();
      },
    });
  }

  createForm.addEventListener('submit', (e) => {
    e.preventDefault();
    runAction(createButton, createError, async () => {
      const name = newName.value.trim();
      if (!/^[a-z]([a-z0-9-]{0,38}[a-z0-9])?$/.test(name)) {
        throw new Error(`invalid volume name "${name}": use lowercase letters, digits and '-'`);
      }
      const body = {name, type: newType.value};
      if (cluster && cluster.project) body.project = cluster.project;
      await post('/api/v1/volumes', body);
      newName.value = '';
      ctx.refreshNow();
    });
  });

  async function refresh(c) {
    cluster = c;
    const allowed = permission(c, 'volumes');
    const attached = c.spec.volumes || [];
    keyedRows(attachedBody, attached, (v) => v.volume, (v) => attachedRow(v, allowed),
      (v) => JSON.stringify([v, allowed]));
    attachedTable.hidden = attached.length === 0;
    attachedEmpty.hidden = attached.length > 0;
    try {
      const data = await get('/api/v1/volumes');
      showError(error, null);
      const mine = new Set(attached.map((v) => v.volume));
      const available = (data.volumes || []).filter((v) =>
        !mine.has(v.name) && (!c.project || !v.project || v.project === c.project));
      keyedRows(availableBody, available, (v) => v.name, (v) => availableRow(v, allowed),
        (v) => JSON.stringify([v, allowed]));
      availableTable.hidden = available.length === 0;
      availableEmpty.hidden = available.length > 0;
      availableEmpty.textContent = 'No other volumes in this project. Create one below.';
    } catch (e) {
      showError(error, e);
      if (e.status === 0) throw e;
    }
  }

  return {el, refresh};
}
