// Slurm Configuration tab: the slurm.conf settings made through corral, an
// editor that builds a change (set / unset), the diff corrald would apply,
// Apply, and the outcome: applied, or refused by slurmctld and rolled back.

import {get, post, clusterPath} from './api.js';
import {
  h, setChildren, keyedRows, badge, formatTime, errorLine, showError, runAction, field,
} from './dom.js';
import {permission, changeAction, followedOf, changeBanner} from './actions.js';
import {loadParams, findParam, checkValue, acceptedForm} from './params.js';

export function configTab(ctx) {
  // ---- Current settings ----
  const currentBody = h('tbody');
  const currentTable = h('table', {class: 'table', testid: 'config-current'},
    h('thead', {}, h('tr', {}, ['Parameter', 'Value', 'Restarts slurmctld', ''].map((c) => h('th', {}, c)))),
    currentBody);
  const currentEmpty = h('p', {class: 'muted', testid: 'config-current-empty'},
    'No settings of yours: slurm.conf has corral\'s defaults.');
  const currentMeta = h('p', {class: 'muted', testid: 'config-revision'});
  const error = errorLine('config-error');

  // ---- Editor ----
  const paramList = h('datalist', {id: 'slurm-params'});
  const valueList = h('datalist', {id: 'slurm-param-values'});
  const param = h('input', {type: 'text', list: 'slurm-params', testid: 'config-param',
    placeholder: 'e.g. MinJobAge', autocomplete: 'off', spellcheck: 'false'});
  const value = h('input', {type: 'text', list: 'slurm-param-values', testid: 'config-value',
    placeholder: 'value', autocomplete: 'off', spellcheck: 'false'});
  const paramInfo = h('div', {class: 'param-info', testid: 'config-param-info'});
  const setButton = h('button', {type: 'submit', testid: 'config-add-set'}, 'Set');
  const unsetButton = h('button', {type: 'button', testid: 'config-add-unset'}, 'Unset');
  const editorError = errorLine('config-editor-error');
  const pendingList = h('ul', {class: 'pending', testid: 'config-pending'});
  const previewButton = h('button', {type: 'button', testid: 'config-preview'}, 'Preview diff');
  const applyButton = h('button', {type: 'button', class: 'primary', testid: 'config-apply', disabled: true},
    'Apply');
  const discardButton = h('button', {type: 'button', testid: 'config-discard'}, 'Discard');
  const applyReason = h('small', {class: 'reason', testid: 'config-apply-reason', hidden: true});
  const applyError = errorLine('config-apply-error');
  const diffBox = h('div', {class: 'diff-box', testid: 'config-diff-box', hidden: true});
  const result = h('div', {testid: 'config-result-slot'});

  const editor = h('form', {class: 'form card', testid: 'config-editor', novalidate: true},
    h('h2', {}, 'Change the configuration'),
    h('div', {class: 'row'}, field('Parameter', param), paramList,
      field('Value', value), valueList, h('div', {class: 'field-buttons'}, setButton, unsetButton)),
    paramInfo, editorError,
    h('h3', {}, 'Pending change'),
    pendingList,
    h('div', {class: 'form-buttons'}, discardButton, previewButton, applyButton, applyReason),
    applyError, result, diffBox);

  // ---- What slurm.conf says now: corral's defaults and your settings ----
  const effectiveBody = h('tbody');
  const effective = h('details', {class: 'effective', testid: 'config-effective'},
    h('summary', {}, 'Everything in slurm.conf (corral\'s defaults and your settings)'),
    h('table', {class: 'table compact'},
      h('thead', {}, h('tr', {}, ['Parameter', 'Value', 'Set by'].map((c) => h('th', {}, c)))),
      effectiveBody));

  // ---- Revisions ----
  const revisionsBody = h('tbody');
  const revisions = h('table', {class: 'table compact', testid: 'revisions'},
    h('thead', {}, h('tr', {}, ['Revision', 'State', 'Author', 'Created', 'Message'].map((c) => h('th', {}, c)))),
    revisionsBody);

  const el = h('div', {testid: 'tab-panel-config'},
    h('p', {class: 'muted'}, 'corral writes slurm.conf: edit it here, not on the controller (hand edits ' +
      'are overwritten by the next change). A change is checked by a throwaway slurmctld first; ' +
      'one slurmctld refuses is rolled back before anything live changes.'),
    h('section', {class: 'card'}, h('h2', {}, 'Your settings'), currentMeta, error, currentTable, currentEmpty,
      effective),
    editor,
    h('section', {class: 'card'}, h('h2', {}, 'Revisions'), revisions));

  let defs = [];
  let cluster = null;
  let slurmConf = {};
  // The change being built: key → value to set, or null to unset.
  const pending = new Map();
  // The pending change the shown diff was made for (JSON), '' when none.
  let previewed = '';
  // Revision made by Apply here, whose outcome is shown next to the button.
  let appliedRevision = 0;

  loadParams().then((p) => {
    defs = p.slurmConf || [];
    setChildren(paramList, defs.map((d) => h('option', {value: d.name}, d.type)));
  }).catch((e) => showError(editorError, e));

  // Shows what the chosen parameter is and accepts.
  function describeParam() {
    const def = findParam(defs, param.value.trim());
    if (!def) {
      setChildren(paramInfo, param.value.trim() && defs.length
        ? h('span', {class: 'muted'}, 'Not a parameter corral lets users set; pick one from the list.')
        : null);
      setChildren(valueList);
      return null;
    }
    const current = slurmConf[def.name];
    setChildren(paramInfo,
      h('strong', {class: 'mono'}, def.name), ` (${def.type}) — `, def.help,
      h('div', {class: 'muted'}, `Accepts ${acceptedForm(def)}.`,
        def.needsRestart ? ' Changing it restarts slurmctld (running jobs keep running).' : ' Applied with scontrol reconfigure.',
        current !== undefined ? ` Currently set to ${current}.` : ' Not set: Slurm\'s default applies.'));
    const values = def.type === 'bool' ? ['YES', 'NO'] : def.values || [];
    setChildren(valueList, values.map((v) => h('option', {value: v})));
    return def;
  }
  param.addEventListener('input', describeParam);
  param.addEventListener('change', describeParam);

  function renderPending() {
    setChildren(pendingList, pending.size === 0
      ? h('li', {class: 'muted'}, 'Nothing yet: choose a parameter, then Set or Unset.')
      : [...pending].map(([k, v]) => h('li', {testid: `pending-${k}`},
        h('code', {}, v === null ? `unset ${k}` : `${k}=${v}`),
        h('button', {type: 'button', class: 'link', title: 'Remove from the change',
          onclick: () => { pending.delete(k); changedPending(); }}, '×'))));
    updateButtons();
  }

  function changedPending() {
    previewed = '';
    diffBox.hidden = true;
    showError(applyError, null);
    renderPending();
  }

  function body() {
    const set = {};
    const unset = [];
    for (const [k, v] of pending) {
      if (v === null) unset.push(k);
      else set[k] = v;
    }
    const b = {};
    if (Object.keys(set).length) b.set = set;
    if (unset.length) b.unset = unset;
    return b;
  }

  function updateButtons() {
    const allowed = cluster ? permission(cluster, 'config') : {allowed: false, reason: 'loading…'};
    let reason = allowed.allowed ? '' : allowed.reason;
    if (!reason && pending.size === 0) reason = 'add a setting to the change first';
    else if (!reason && previewed !== JSON.stringify(body())) reason = 'preview the diff first';
    applyButton.disabled = !!reason;
    applyButton.title = reason;
    applyReason.hidden = !reason;
    applyReason.textContent = reason;
    previewButton.disabled = pending.size === 0;
    discardButton.disabled = pending.size === 0;
  }

  editor.addEventListener('submit', (e) => {  // "Set" (also Enter in the value box).
    e.preventDefault();
    showError(editorError, null);
    const def = findParam(defs, param.value.trim());
    if (!def) return showError(editorError, new Error(`"${param.value.trim()}" is not a parameter corral lets users set`));
    const problem = checkValue(def, value.value);
    if (problem) return showError(editorError, new Error(problem));
    pending.set(def.name, value.value.trim());
    param.value = '';
    value.value = '';
    describeParam();
    changedPending();
    param.focus();
  });

  unsetButton.addEventListener('click', () => {
    showError(editorError, null);
    const def = findParam(defs, param.value.trim());
    if (!def) return showError(editorError, new Error(`"${param.value.trim()}" is not a parameter corral lets users set`));
    pending.set(def.name, null);
    param.value = '';
    value.value = '';
    describeParam();
    changedPending();
  });

  discardButton.addEventListener('click', () => {
    pending.clear();
    changedPending();
  });

  previewButton.addEventListener('click', () => runAction(previewButton, applyError, async () => {
    const b = body();
    const answer = await post(clusterPath(ctx.clusterName, 'config', 'diff'), b);
    previewed = JSON.stringify(b);
    diffBox.hidden = false;
    setChildren(diffBox,
      h('p', {testid: 'config-restarts', class: answer.restartsSlurmctld ? 'warn-text' : 'muted'},
        answer.restartsSlurmctld
          ? 'Applying this restarts slurmctld. Running jobs keep running; the queue is kept.'
          : 'Applying this does not restart slurmctld (scontrol reconfigure).'),
      answer.diff
        ? h('pre', {class: 'diff', testid: 'config-diff'}, answer.diff.replace(/\n$/, '').split('\n').map((line) =>
          h('span', {class: line.startsWith('+++') || line.startsWith('---') ? 'diff-file'
            : line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del'
              : line.startsWith('@@') ? 'diff-hunk' : ''}, `${line}\n`)))
        : h('p', {class: 'muted', testid: 'config-diff'}, 'No file changes.'));
    updateButtons();
  }));

  applyButton.addEventListener('click', () => runAction(applyButton, applyError, async () => {
    const answer = await changeAction(ctx.clusterName, 'PATCH', clusterPath(ctx.clusterName, 'config'), body());
    if (answer.change && answer.change.made) {
      appliedRevision = answer.change.revision;
      renderResult();
    } else {
      appliedRevision = 0;
      setChildren(result, h('div', {class: 'banner banner-ok', testid: 'config-result'},
        'Nothing to change: the configuration already has these values.'));
    }
    pending.clear();
    changedPending();
    ctx.refreshNow();
  }));

  // Whether `entry` (the change the cluster page follows) is this tab's
  // Apply, whose outcome is shown here next to the button.
  function showsChange(entry) {
    return !!appliedRevision && !!entry && (entry.revision === appliedRevision || !!entry.supersededBy);
  }

  // The outcome of the last Apply from this tab: applying, applied, or
  // failed and rolled back, with slurmctld's error.
  function renderResult() {
    const entry = followedOf(ctx.clusterName);
    if (!showsChange(entry)) return;
    const sig = JSON.stringify([entry, cluster && cluster.phase]);
    if (result.dataset.sig === sig) return;
    result.dataset.sig = sig;
    setChildren(result, changeBanner(entry, cluster, 'config-result'));
  }

  function revisionRow(r) {
    const kind = {Applied: 'ok', Failed: 'bad', Pending: 'busy', Superseded: 'off'}[r.state] || 'off';
    return h('tr', {testid: `revision-${r.revision}`, dataset: {state: r.state}},
      h('td', {}, String(r.revision), r.revision === cluster.appliedRevision ? ' (current)' : ''),
      h('td', {}, badge(r.state, kind, 'revision-state')),
      h('td', {}, r.author),
      h('td', {class: 'nowrap'}, formatTime(r.createdAt)),
      h('td', {class: 'wrap'}, r.message,
        r.error ? h('div', {class: 'error-text', testid: 'revision-error'}, r.error) : null));
  }

  async function refresh(c) {
    cluster = c;
    updateButtons();
    renderResult();
    try {
      const [conf, revs] = await Promise.all([
        get(clusterPath(c.name, 'config')),
        get(clusterPath(c.name, 'revisions')),
      ]);
      showError(error, null);
      slurmConf = conf.slurmConf || {};
      currentMeta.textContent = `Revision ${conf.revision}, applied ${conf.appliedRevision}` +
        (conf.revision > conf.appliedRevision ? ' — the newest revision is still being applied.' : '.');
      const allowed = permission(c, 'config');
      const entries = Object.entries(slurmConf).sort(([a], [b]) => a.localeCompare(b));
      keyedRows(currentBody, entries, ([k]) => k, ([k, v]) => {
        const def = findParam(defs, k);
        return h('tr', {testid: `config-row-${k}`},
          h('td', {class: 'mono', title: def ? def.help : ''}, k),
          h('td', {class: 'mono wrap', testid: 'value'}, v),
          h('td', {}, def ? (def.needsRestart ? 'yes' : 'no') : '-'),
          h('td', {class: 'actions-cell'}, h('button', {type: 'button', testid: 'config-unset',
            disabled: !allowed.allowed, title: allowed.reason || 'Add "unset" to the pending change',
            onclick: () => { pending.set(k, null); changedPending(); }}, 'Unset…')));
      }, (e) => JSON.stringify([e, allowed, defs.length]));
      const inEffect = Object.entries(conf.effective || {}).sort(([a], [b]) => a.localeCompare(b));
      keyedRows(effectiveBody, inEffect, ([k]) => k, ([k, v]) =>
        h('tr', {testid: `config-effective-${k}`},
          h('td', {class: 'mono'}, k),
          h('td', {class: 'mono wrap'}, v),
          h('td', {}, k in slurmConf ? 'you' : 'corral')),
      (e) => JSON.stringify([e, e[0] in slurmConf]));
      currentTable.hidden = entries.length === 0;
      currentEmpty.hidden = entries.length > 0;
      const list = (revs.revisions || []).slice().reverse();
      keyedRows(revisionsBody, list, (r) => r.revision, revisionRow,
        (r) => JSON.stringify([r.state, r.error, r.revision === c.appliedRevision]));
    } catch (e) {
      showError(error, e);
      if (e.status === 0) throw e;
    }
  }

  renderPending();
  return {el, refresh, showsChange};
}
