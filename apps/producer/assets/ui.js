// Cairn run pages: the buttons (cancel, continue, fork, upgrade, decisions) and the live tail.
// Plain script, no build step, no dependency: the pages are server-rendered and
// this only posts to the HTTP API and re-renders sections from the same page.
/* global document, window, location, fetch, EventSource, DOMParser, CSS, setTimeout, setInterval, clearInterval */
(() => {
  'use strict';

  const REFRESH_MS = 2000;
  const TAIL_LIMIT = 200;

  const csrfToken = () =>
    document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

  async function post(path, body) {
    const res = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken() },
      body: JSON.stringify(body ?? {}),
    });
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    return { res, data };
  }

  function flash(text, kind) {
    const el = document.getElementById('flash');
    if (!el) return;
    el.textContent = text;
    el.className = `flash flash-${kind}`;
  }

  function describe(res, data) {
    return data && typeof data.message === 'string'
      ? `${res.status}: ${data.message}`
      : `HTTP ${res.status}`;
  }

  // ---- run list: "Cancel selected" asks here, then posts with confirm=1 (without a script, the server's page asks) ----
  const bulkCancel = document.getElementById('bulk-cancel');
  bulkCancel?.addEventListener('submit', (event) => {
    const selected = document.querySelectorAll('input[name="run_id"][form="bulk-cancel"]:checked');
    const n = selected.length;
    const asked =
      n === 0
        ? (window.alert('Select the runs to cancel first.'), false)
        : window.confirm(`Cancel ${n} run${n === 1 ? '' : 's'}? This cannot be undone.`);
    if (!asked) {
      event.preventDefault();
      return;
    }
    if (!bulkCancel.querySelector('input[name="confirm"]')) {
      const confirmed = document.createElement('input');
      Object.assign(confirmed, { type: 'hidden', name: 'confirm', value: '1' });
      bulkCancel.append(confirmed);
    }
  });

  // ---- run page ----
  const root = document.getElementById('run');
  if (!root) return;
  const runId = root.dataset.runId;
  const runPath = `/v1/runs/${encodeURIComponent(runId)}`;

  async function command(name, button) {
    const input = document.getElementById('continue-input')?.value.trim() ?? '';
    if (name === 'cancel') return post(`${runPath}/cancel`, {});
    if (name === 'suspend') return post(`${runPath}/suspend`, {});
    if (name === 'suspend-now') return post(`${runPath}/suspend`, { now: true });
    if (name === 'resume') return post(`${runPath}/resume`, {});
    if (name === 'continue') return post(`${runPath}/continue`, input ? { input } : {});
    if (name === 'fork') return post(`${runPath}/fork`, input ? { input } : {});
    if (name === 'fork-at') {
      const at = { checkpoint: Number(button.dataset.checkpoint) };
      return post(`${runPath}/fork`, input ? { at, input } : { at });
    }
    if (name === 'upgrade')
      return post(`${runPath}/continue`, input ? { upgrade: true, input } : { upgrade: true });
    const action = button.closest('[data-action-id]');
    if (!action) return undefined;
    const decision = { action_id: action.dataset.actionId };
    if (action.dataset.argsDigest) decision.args_digest = action.dataset.argsDigest;
    if (name === 'approve') decision.type = 'approve';
    if (name === 'reject') {
      decision.type = 'reject';
      decision.message =
        action.querySelector('.action-message')?.value.trim() || 'rejected from the run page';
    }
    if (name === 'edit') {
      decision.type = 'edit';
      try {
        decision.args = JSON.parse(action.querySelector('.action-args')?.value ?? '');
      } catch {
        flash('the edited args are not valid JSON', 'error');
        return undefined;
      }
    }
    if (name === 'result') {
      decision.type = 'result';
      decision.output = action.querySelector('.action-output')?.value ?? '';
    }
    if (name === 'raise-budget') {
      const budget = raisedBudget(action);
      if (typeof budget === 'string') {
        flash(budget, 'error');
        return undefined;
      }
      decision.type = 'approve';
      decision.budget = budget;
    }
    return post(`${runPath}/decisions`, { decisions: [decision] });
  }

  // A budget action's raised limits, as the decision names them; a string says what is wrong.
  function raisedBudget(action) {
    const budget = {};
    const fields = [
      ['.budget-max-cost', 'max_cost_usd', 'max cost'],
      ['.budget-max-tokens', 'max_tokens', 'max tokens'],
    ];
    for (const [selector, field, label] of fields) {
      const text = action.querySelector(selector)?.value.trim() ?? '';
      if (text === '') continue;
      const value = Number(text);
      if (!Number.isFinite(value)) return `the ${label} is not a number`;
      budget[field] = value;
    }
    if (Object.keys(budget).length === 0) return 'give a raised max cost or max tokens';
    return budget;
  }

  document.addEventListener('click', async (event) => {
    const button =
      event.target instanceof window.Element ? event.target.closest('button[data-command]') : null;
    if (!button || button.disabled) return;
    event.preventDefault();
    const name = button.dataset.command;
    button.disabled = true;
    try {
      const answer = await command(name, button);
      if (!answer) return;
      const { res, data } = answer;
      if (!res.ok) {
        flash(`${name} refused: ${describe(res, data)}`, 'error');
        return;
      }
      if (name.startsWith('fork') && data && data.run_id && data.run_id !== runId) {
        location.assign(`/ui/runs/${encodeURIComponent(data.run_id)}`);
        return;
      }
      const what = [data && data.action, data && data.status && `status ${data.status}`]
        .filter(Boolean)
        .join(', ');
      flash(`${name}: ${what || 'done'}`, 'ok');
    } catch (error) {
      flash(`${name} failed: ${error}`, 'error');
    } finally {
      button.disabled = false;
      await refreshAfterChange();
    }
  });

  // What a person typed into a section's fields (a raised budget, edited args, a
  // reject message, an external result) survives its re-render: a field is
  // known by its action and its class, and a field whose value differs from
  // what the page rendered is carried over. The field that has the focus keeps
  // it, with its selection, even before anything is typed in it: keys typed
  // just after a re-render land in the field the person chose.
  const fieldKey = (field) =>
    `${field.closest('[data-action-id]')?.dataset.actionId ?? ''} ${field.className}`;
  function typedFields(section) {
    const typed = new Map();
    for (const field of section.querySelectorAll('input, textarea')) {
      const focused = document.activeElement === field;
      if (field.value === field.defaultValue && !focused) continue;
      typed.set(fieldKey(field), {
        // Only what was typed overrides the new render's value; focus alone keeps that value.
        value: field.value === field.defaultValue ? null : field.value,
        focused,
        selection: focused ? selectionOf(field) : null,
      });
    }
    return typed;
  }
  function restoreTypedFields(section, typed) {
    if (typed.size === 0) return;
    for (const field of section.querySelectorAll('input, textarea')) {
      const kept = typed.get(fieldKey(field));
      if (!kept || field.disabled) continue;
      if (kept.value !== null) field.value = kept.value;
      if (!kept.focused) continue;
      field.focus();
      if (kept.selection) field.setSelectionRange(...kept.selection);
    }
  }
  // A field's selection, or null where its type has none (a number input).
  function selectionOf(field) {
    try {
      return field.selectionStart === null ? null : [field.selectionStart, field.selectionEnd];
    } catch {
      return null;
    }
  }

  // Re-renders every [data-refresh] section from a fresh copy of this page.
  let refreshing = null;
  async function refresh() {
    if (refreshing) return refreshing;
    refreshing = (async () => {
      try {
        const res = await fetch(location.href, {
          credentials: 'same-origin',
          headers: { Accept: 'text/html' },
        });
        if (!res.ok) return;
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        const fresh = doc.getElementById('run');
        if (!fresh) return;
        for (const section of fresh.querySelectorAll('[data-refresh]')) {
          const current = root.querySelector(`[data-refresh="${section.dataset.refresh}"]`);
          if (current && current.innerHTML !== section.innerHTML) {
            // An expanded <details> with an id (a waterfall's member run) stays expanded.
            const open = [...current.querySelectorAll('details[open][id]')].map((d) => d.id);
            const typed = typedFields(current);
            current.innerHTML = section.innerHTML;
            for (const id of open) document.getElementById(id)?.setAttribute('open', '');
            restoreTypedFields(current, typed);
          }
        }
        waterfallRefreshed();
        root.dataset.status = fresh.dataset.status;
        root.dataset.live = fresh.dataset.live;
        if (root.dataset.live === '1') follow();
        else stopFollowing();
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  // A re-read after a change this page learned of (a command it posted, an event of the run):
  // one already under way may have read the page before that change, so this one waits for it
  // and reads again; calls that wait together share the next read.
  async function refreshAfterChange() {
    await refreshing?.catch(() => undefined);
    return refresh();
  }

  // ---- live tail: SSE from GET /v1/runs/:id/events, plus a periodic refresh ----
  let source = null;
  let timer = null;
  let refreshSoon = null;
  // The stream's cursor after the last stored event (its SSE id: the seq, or a team's seqs joined by dots).
  let lastCursor = '0';
  const tail = document.getElementById('tail');
  const tailState = document.getElementById('tail-state');
  const eventTypes = (root.dataset.eventTypes ?? '').split(',').filter(Boolean);
  const finalTypes = (root.dataset.finalTypes ?? '').split(',').filter(Boolean);

  // A member run's event in its team's stream: its data carries the member's run_id, member_path and member_seq.
  function memberPathOf(data) {
    return data &&
      typeof data === 'object' &&
      typeof data.run_id === 'string' &&
      Array.isArray(data.member_path)
      ? data.member_path
      : null;
  }

  // When each tool call and model request began (by run and call), for the durations of their ends.
  const begun = new Map();
  const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
  function sinceBegun(key, data) {
    const start = begun.get(key);
    begun.delete(key);
    const end = Date.parse(String(data.at ?? ''));
    return start === undefined || Number.isNaN(end) ? '' : ` in ${seconds(end - start)}`;
  }
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

  // One event in words: "slow_fetch_detail completed in 1.02 s"; the raw JSON sits behind the toggle.
  function eventInWords(type, data) {
    const d = data && typeof data === 'object' ? data : {};
    const run = String(d.run_id ?? runId);
    const at = Date.parse(String(d.at ?? ''));
    switch (type) {
      case 'RunStarted':
        return `started on worker ${d.workerId}`;
      case 'RunContinued':
        return `resumed (${d.reason}) on worker ${d.workerId}`;
      case 'ModelRequestStarted':
        if (!Number.isNaN(at)) begun.set(`${run}:model`, at);
        return `asked ${d.model} (${plural(d.messages, 'message')})`;
      case 'ModelRequestCompleted': {
        if (d.rateLimited)
          return `${d.model} is rate limited: the fleet waits ${seconds(d.pausedMs)}`;
        if (d.retrying)
          return `the model failed (${d.error}); retry ${d.attempt} in ${seconds(d.delayMs)}`;
        const took = sinceBegun(`${run}:model`, d);
        const what = d.toolCalls > 0 ? plural(d.toolCalls, 'tool call') : 'its answer';
        const tokens = d.usage && d.usage.totalTokens ? `, ${d.usage.totalTokens} tokens` : '';
        return `${d.model} answered${took} with ${what}${tokens}`;
      }
      case 'ToolCallStarted':
        if (!Number.isNaN(at)) begun.set(`${run}:${d.toolCallId}`, at);
        return `${d.name} started`;
      case 'ToolCallCompleted':
        return `${d.name} completed${sinceBegun(`${run}:${d.toolCallId}`, d)}`;
      case 'ToolCallError':
        return `${d.name} failed${sinceBegun(`${run}:${d.toolCallId}`, d)}: ${d.error}`;
      case 'CheckpointCommitted':
        return `checkpoint: ${plural(d.lastCheckpointAtMessageIndex, 'message')} committed`;
      case 'CapacityWait':
        return `waiting for capacity on ${d.model} until ${String(d.until).slice(11, 19)}Z`;
      case 'RunPaused':
        return `paused for a person: ${plural((d.actions ?? []).length, 'pending action')}`;
      case 'ActionDecided':
        return `action ${d.action_id} decided: ${d.type}`;
      case 'ActionExpired':
        return `action ${d.action_id} expired`;
      case 'DefinitionUpgraded':
        return `resumed on definition ${d.to} (was ${d.from})`;
      case 'RunCompleted':
        return 'completed';
      case 'RunError':
        return `ended in ERROR: ${d.error ? `${d.error.name}: ${d.error.message}` : 'unknown error'}`;
      case 'RunCancelled':
        return 'cancelled';
      default:
        return type;
    }
  }

  function appendTail(type, data, cursor) {
    if (!tail) return;
    const item = document.createElement('li');
    item.dataset.type = type;
    const memberPath = memberPathOf(data);
    if (memberPath) item.dataset.memberPath = memberPath.join('/');
    const words = document.createElement('span');
    words.className = 'tail-words';
    const who = memberPath ? `${memberPath.at(-1)}: ` : '';
    words.textContent = `${who}${eventInWords(type, data)}`;
    const raw = document.createElement('code');
    raw.className = 'tail-raw';
    const summary = data && typeof data === 'object' ? JSON.stringify(data) : String(data);
    const label = memberPath
      ? `${memberPath.join('/')} #${data.member_seq}`
      : `#${cursor.split('.')[0]}`;
    raw.textContent = `${label} ${type} ${summary.length > 300 ? `${summary.slice(0, 300)}…` : summary}`;
    item.append(words, raw);
    tail.append(item);
    while (tail.children.length > TAIL_LIMIT) tail.firstElementChild?.remove();
  }

  document.getElementById('tail-raw')?.addEventListener('change', (event) => {
    tail?.classList.toggle('show-raw', event.target.checked);
  });

  // The model's text as it streams (ModelDelta, never stored); a takeover's AttemptAbandoned drops the dead execution's text.
  const liveText = document.getElementById('live-text');
  let liveTurn = '';
  function onLiveEvent(type, data) {
    if (!liveText || !data || typeof data !== 'object') return;
    if (type === 'AttemptAbandoned') {
      if (liveTurn.startsWith(`${data.epoch}:`)) {
        liveTurn = '';
        liveText.textContent = '';
        liveText.hidden = true;
      }
      return;
    }
    const turn = `${data.epoch}:${data.message_index}`;
    if (turn !== liveTurn) {
      liveTurn = turn;
      liveText.textContent = '';
    }
    liveText.textContent += String(data.text ?? '');
    liveText.hidden = false;
  }

  function onEvent(event) {
    let data = null;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = event.data;
    }
    if (event.type === 'ModelDelta' || event.type === 'AttemptAbandoned') {
      waterfallLiveText(event.type, data);
      // The live text is the run's own; its members' stream on their own pages.
      if (!memberPathOf(data)) onLiveEvent(event.type, data);
      return;
    }
    if (event.lastEventId) lastCursor = event.lastEventId;
    appendTail(event.type, data, event.lastEventId);
    if (refreshSoon === null) {
      refreshSoon = setTimeout(() => {
        refreshSoon = null;
        void refreshAfterChange();
      }, 250);
    }
    // A member's RunCompleted is not its team's: only the run's own final event ends the tail.
    if (finalTypes.includes(event.type) && !memberPathOf(data)) source?.close();
  }

  function follow() {
    if (timer === null) timer = setInterval(() => void refresh(), REFRESH_MS);
    if (source !== null && source.readyState !== EventSource.CLOSED) return;
    source = new EventSource(
      `${runPath}/events?after=${encodeURIComponent(lastCursor)}${root.dataset.liveText === '1' ? '&include=deltas' : ''}`,
    );
    for (const type of eventTypes) source.addEventListener(type, onEvent);
    // The server ends the stream after the run's final event; don't reconnect to a finished run.
    source.addEventListener('error', () => {
      if (root.dataset.live !== '1') source?.close();
    });
    if (tailState) tailState.textContent = 'following the run…';
  }

  // The event stream stays open until it delivers the final event (it closes itself then).
  function stopFollowing() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    if (tailState) tailState.textContent = `the run is ${root.dataset.status}`;
  }

  // ---- waterfall: open bars grow while the run runs, streamed text shows in its turn's bar, a click shows a bar's details ----
  const waterfall = root.querySelector('[data-refresh="waterfall"]');
  const panel = document.getElementById('wf-panel');
  // When the waterfall's server clock (`data-now`) was read here: open bars end at that clock plus the time since.
  let waterfallNow = '';
  let waterfallAt = Date.now();
  // Turns whose text streamed while the page was open: `${run}|${epoch}:${index}` → { s, text }.
  const liveTurns = new Map();
  const shortSeconds = (ms) => (ms < 1000 ? `${Math.round(ms)} ms` : seconds(ms));

  function waterfallClock(wf) {
    if (wf.dataset.now !== waterfallNow) {
      waterfallNow = wf.dataset.now;
      waterfallAt = Date.now();
    }
    return Number(wf.dataset.now) + (Date.now() - waterfallAt) - Number(wf.dataset.t0);
  }

  // Places every [data-s] span by percentage of the axis, which grows to now while the run is live.
  function layoutWaterfall() {
    const wf = waterfall?.querySelector('.wf');
    if (!wf) return;
    const live = wf.dataset.live === '1' && root.dataset.live === '1';
    const now = waterfallClock(wf);
    const span = live ? Math.max(Number(wf.dataset.span), now) : Number(wf.dataset.span);
    const pct = (ms) => `${((ms / span) * 100).toFixed(3)}%`;
    for (const el of wf.querySelectorAll('[data-s]')) {
      const s = Number(el.dataset.s);
      const e = el.dataset.e === undefined ? (live ? now : span) : Number(el.dataset.e);
      if (el.classList.contains('wf-running')) {
        el.textContent = `running ${shortSeconds(Math.max(0, e - s))}`;
        continue;
      }
      el.style.left = pct(s);
      el.style.width = pct(Math.max(0, e - s));
    }
    for (const tick of wf.querySelectorAll('.wf-tick')) {
      const ms = span * Number(tick.dataset.tick);
      tick.style.left = pct(ms);
      tick.textContent = shortSeconds(ms);
    }
  }

  // A run's own lanes in the waterfall (not its members', nested below).
  function laneOf(run, epoch) {
    const block = [...(waterfall?.querySelectorAll('[data-wf-run]') ?? [])].find(
      (el) => el.dataset.wfRun === run,
    );
    return block?.querySelector(`:scope > .wf-lane[data-epoch="${Number(epoch)}"]`) ?? null;
  }

  // Shows each streamed turn's text in its bar: the stored turn's once it is drawn, else a live row of its own.
  function placeLiveTurns() {
    const wf = waterfall?.querySelector('.wf');
    if (!wf) return;
    for (const [key, turn] of liveTurns) {
      const lane = laneOf(turn.run, turn.epoch);
      if (!lane) continue;
      const stored = lane.querySelector(
        `:scope > .wf-row .wf-bar[data-turn="${CSS.escape(turn.turn)}"]`,
      );
      // Once stored, the turn's own bar holds the text it streamed.
      if (stored)
        lane.querySelector(`:scope > .wf-row[data-live-turn="${CSS.escape(turn.turn)}"]`)?.remove();
      let bar = stored;
      if (!bar) {
        let row = lane.querySelector(`:scope > .wf-row[data-live-turn="${CSS.escape(turn.turn)}"]`);
        if (!row) {
          row = document.createElement('div');
          row.className = 'wf-row';
          row.dataset.bar = 'turn';
          row.dataset.liveTurn = turn.turn;
          const name = document.createElement('span');
          name.className = 'wf-name';
          name.textContent = 'model · streaming its answer…';
          const track = document.createElement('div');
          track.className = 'wf-track';
          const link = document.createElement('a');
          link.className = 'wf-bar bar-turn status-running';
          link.href = '#waterfall';
          link.dataset.s = String(turn.s);
          link.dataset.liveKey = key;
          const text = document.createElement('span');
          text.className = 'wf-bar-text';
          link.append(text);
          track.append(link);
          row.append(name, track);
          lane.append(row);
        }
        bar = row.querySelector('.wf-bar');
      }
      const text = bar.querySelector('.wf-bar-text');
      if (text) text.textContent = turn.text.slice(-160);
      bar.title = turn.text;
    }
  }

  function waterfallLiveText(type, data) {
    if (!waterfall || !data || typeof data !== 'object') return;
    const run = typeof data.run_id === 'string' && memberPathOf(data) ? data.run_id : runId;
    if (type === 'AttemptAbandoned') {
      for (const [key, turn] of liveTurns) {
        if (turn.run !== run || turn.epoch !== data.epoch) continue;
        liveTurns.delete(key);
        laneOf(run, turn.epoch)
          ?.querySelector(`[data-live-key="${CSS.escape(key)}"]`)
          ?.closest('.wf-row')
          ?.remove();
      }
      return;
    }
    const wf = waterfall.querySelector('.wf');
    if (!wf) return;
    const key = `${run}|${data.epoch}:${data.message_index}`;
    const turn = liveTurns.get(key) ?? {
      run,
      epoch: data.epoch,
      turn: `${data.epoch}:${data.message_index}`,
      s: waterfallClock(wf),
      text: '',
    };
    turn.text += String(data.text ?? '');
    liveTurns.set(key, turn);
    placeLiveTurns();
    layoutWaterfall();
  }

  function waterfallRefreshed() {
    placeLiveTurns();
    layoutWaterfall();
    if (root.dataset.live === '1') tickWaterfall();
  }

  function showDetail(content) {
    if (!panel) return;
    const body = panel.querySelector('.wf-panel-body');
    body.replaceChildren(content);
    panel.hidden = false;
  }

  document.addEventListener('click', async (event) => {
    const target = event.target instanceof window.Element ? event.target : null;
    if (target?.closest('[data-wf-close]')) {
      if (panel) panel.hidden = true;
      return;
    }
    const bar = target?.closest('.wf-bar');
    if (!bar || !waterfall?.contains(bar)) return;
    event.preventDefault();
    for (const el of waterfall.querySelectorAll('.wf-bar.selected'))
      el.classList.remove('selected');
    bar.classList.add('selected');
    if (bar.dataset.detail) {
      const detail = document.getElementById(bar.dataset.detail);
      const copy = detail?.cloneNode(true);
      copy?.removeAttribute('id');
      if (copy) showDetail(copy);
      return;
    }
    if (bar.dataset.liveKey) {
      const pre = document.createElement('pre');
      pre.className = 'value live-text';
      pre.textContent = liveTurns.get(bar.dataset.liveKey)?.text ?? '';
      showDetail(pre);
      return;
    }
    if (!bar.dataset.detailUrl) return;
    const res = await fetch(bar.dataset.detailUrl, { credentials: 'same-origin' });
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const detail = doc.querySelector('.wf-turn-detail');
    if (detail) showDetail(document.importNode(detail, true));
    else flash(`the turn's details did not load: HTTP ${res.status}`, 'error');
  });

  // While the run is live (again, after a continue), open bars grow four times a second.
  let ticking = null;
  function tickWaterfall() {
    if (!waterfall || ticking !== null) return;
    ticking = setInterval(() => {
      layoutWaterfall();
      if (root.dataset.live === '1') return;
      clearInterval(ticking);
      ticking = null;
    }, 250);
  }

  layoutWaterfall();
  tickWaterfall();

  if (root.dataset.live === '1') follow();
})();
