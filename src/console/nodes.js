// Nodes tab: every worker with its Slurm name beside its physical ID, Slurm
// state and reason, GPUs, health and XIDs; a node's history; Reboot.

import {get, clusterPath} from './api.js';
import {
  h, setChildren, keyedRows, badge, nodeStateKind, formatTimeMs, errorLine, showError, spinner,
  openDialog,
} from './dom.js';
import {permission, changeAction} from './actions.js';

export function nodesTab(ctx) {
  const tbody = h('tbody');
  const table = h('table', {class: 'table', testid: 'nodes'},
    h('thead', {}, h('tr', {},
      ['Node', 'Group', 'Address', 'GPUs', 'State', 'Reason', 'Health', 'XIDs', 'Reboots', '']
        .map((c) => h('th', {}, c)))),
    tbody);
  const error = errorLine('nodes-error');
  const detail = h('section', {class: 'card', testid: 'node-detail', hidden: true});
  const el = h('div', {testid: 'tab-panel-nodes'},
    h('p', {class: 'muted'}, 'Use the Slurm name (slinky-0) in job scripts and partitions; quote the ' +
      'physical ID (corral_node_N) when you report a hardware problem. A hardware XID drains the node; ' +
      'Reboot recreates its pod, ends any job on it and empties its /root and /tmp.'),
    error, table, detail);

  let selected = '';
  // node name → revision of its reboot, until that revision is applied.
  const rebooting = new Map();
  let cluster = null;

  function row(n) {
    const p = permission(cluster, 'nodes');
    const rev = rebooting.get(n.name);
    const health = n.health || 'unknown';
    const lastXid = n.xids && n.xids.length ? n.xids[n.xids.length - 1] : null;
    // "GPU XID 79", as `corral node list` shows it: the XID that drained it.
    const hardware = (n.xids || []).filter((x) => x.class === 'hardware').pop();
    const healthText = health === 'GPU XID' && hardware ? `GPU XID ${hardware.code}` : health;
    const reboot = h('button', {type: 'button', testid: 'reboot', disabled: !p.allowed || !!rev,
      title: p.allowed ? null : p.reason, onclick: () => confirmReboot(n)}, 'Reboot');
    return h('tr', {testid: `node-row-${n.name}`, class: n.name === selected ? 'selected' : '',
      dataset: {state: n.state || ''}},
      h('td', {class: 'nowrap'},
        h('a', {href: `${ctx.base}/nodes/${encodeURIComponent(n.name)}`, testid: 'node-link',
          title: `Slurm name ${n.name}, physical ID ${n.physicalId}`},
          h('span', {class: 'mono', testid: 'physical-id'}, n.physicalId), ' (',
          h('strong', {class: 'mono', testid: 'slurm-name'}, n.name), ')')),
      h('td', {}, n.group),
      h('td', {class: 'mono'}, n.address),
      h('td', {}, String(n.gpus)),
      h('td', {}, badge(n.state || '-', nodeStateKind(n.state), 'state')),
      h('td', {class: 'wrap', testid: 'reason'}, n.reason || '-'),
      h('td', {}, badge(healthText, health === 'ok' ? 'ok' : health === 'unknown' ? 'off' : 'bad', 'health')),
      h('td', {testid: 'xids'}, n.xids && n.xids.length
        ? `${n.xids.length} (last: ${lastXid.code}, ${lastXid.class})` : '-'),
      h('td', {}, String(n.reboots ?? 0)),
      h('td', {class: 'actions-cell'},
        rev ? h('span', {class: 'progress', testid: 'rebooting'}, spinner(), `rebooting (revision ${rev})`)
          : null,
        reboot,
        p.allowed ? null : h('small', {class: 'reason', testid: 'reboot-reason'}, p.reason)));
  }

  function confirmReboot(n) {
    return openDialog({
      title: `Reboot ${n.physicalId} (${n.name})?`,
      body: [h('p', {}, `corral recreates the pod of ${n.name}. A job running on it is lost, and its ` +
        '/root and /tmp are emptied; /shared and volumes stay. The node comes back idle and any ' +
        'drain is lifted.')],
      confirmLabel: `Reboot ${n.name}`,
      danger: true,
      onConfirm: async () => {
        const answer = await changeAction(ctx.clusterName, 'POST',
          clusterPath(ctx.clusterName, 'nodes', n.name, 'reboot'));
        if (answer.change && answer.change.made) rebooting.set(n.name, answer.change.revision);
        ctx.refreshNow();
      },
    });
  }

  async function refreshDetail() {
    if (!selected) {
      detail.hidden = true;
      return;
    }
    let n;
    try {
      n = await get(clusterPath(ctx.clusterName, 'nodes', selected));
    } catch (e) {
      detail.hidden = false;
      setChildren(detail, h('h2', {}, selected), h('div', {class: 'error-line'}, e.message));
      return;
    }
    detail.hidden = false;
    const sig = JSON.stringify(n);
    if (detail.dataset.sig === sig) return;
    detail.dataset.sig = sig;
    const xids = n.xids || [];
    const history = (n.history || []).slice().reverse();
    setChildren(detail,
      h('div', {class: 'card-head'},
        h('h2', {}, `${n.physicalId} (${n.name})`),
        h('a', {href: `${ctx.base}/nodes`, class: 'button', testid: 'node-detail-close'}, 'Close')),
      h('dl', {class: 'details'},
        h('dt', {}, 'State'), h('dd', {}, n.state || '-'),
        h('dt', {}, 'Reason'), h('dd', {}, n.reason || '-'),
        h('dt', {}, 'Health'), h('dd', {}, n.health || '-'),
        h('dt', {}, 'GPUs'), h('dd', {}, String(n.gpus)),
        h('dt', {}, 'Address'), h('dd', {}, n.address),
        h('dt', {}, 'Reboots'), h('dd', {}, String(n.reboots ?? 0))),
      h('h3', {}, 'XID history'),
      xids.length === 0 ? h('p', {class: 'muted', testid: 'node-xids'}, 'No XID errors seen.')
        : h('table', {class: 'table compact', testid: 'node-xids'},
          h('thead', {}, h('tr', {}, ['Time', 'XID', 'PCI', 'Class', 'Action', 'Description']
            .map((c) => h('th', {}, c)))),
          h('tbody', {}, xids.slice().reverse().map((x) => h('tr', {},
            h('td', {class: 'nowrap'}, formatTimeMs(x.time)),
            h('td', {}, String(x.code)),
            h('td', {class: 'mono'}, x.pci),
            h('td', {}, badge(x.class, x.class === 'hardware' ? 'bad' : 'off')),
            h('td', {}, x.action || '-'),
            h('td', {class: 'wrap', title: x.line}, x.description))))),
      h('h3', {}, 'History'),
      history.length === 0 ? h('p', {class: 'muted'}, 'No events for this node.')
        : h('table', {class: 'table compact', testid: 'node-history'},
          h('thead', {}, h('tr', {}, ['Time', 'Type', 'Reason', 'Message'].map((c) => h('th', {}, c)))),
          h('tbody', {}, history.map((e) => h('tr', {},
            h('td', {class: 'nowrap'}, formatTimeMs(e.time)),
            h('td', {}, badge(e.type, e.type === 'Warning' ? 'warn' : 'off')),
            h('td', {}, e.reason),
            h('td', {class: 'wrap'}, e.message))))));
  }

  async function refresh(c) {
    cluster = c;
    // A reboot is done once its revision is applied (or the change ended otherwise).
    for (const [node, rev] of rebooting) {
      if (c.appliedRevision >= rev || c.status !== 'Running') rebooting.delete(node);
    }
    try {
      const data = await get(clusterPath(c.name, 'nodes'));
      showError(error, null);
      const p = permission(c, 'nodes');
      keyedRows(tbody, data.nodes || [], (n) => n.name, row,
        (n) => JSON.stringify([n, p, rebooting.get(n.name), n.name === selected]));
    } catch (e) {
      showError(error, e);
      if (e.status === 0) throw e;
    }
    await refreshDetail();
  }

  function route(item) {
    if ((item || '') === selected) return;
    selected = item || '';
    detail.dataset.sig = '';
    if (cluster) ctx.refreshNow();
  }

  return {el, refresh, route};
}
