/* The emulator's playground: a Slack-like channel view, in plain JavaScript.
 *
 * It reads GET /ui/state?user=&channel= (a snapshot of what the acting user
 * sees), reloads it whenever GET /ui/events (server-sent events) reports a
 * change, and acts through POST /ui/post, /ui/click, /ui/choose,
 * /ui/submit, /ui/close and /ui/shortcut (see web.go).
 *
 * DOM CONTRACT: a browser test relies on exactly these; keep them stable.
 *   #user-picker                  <select>; option values are user ids; a change acts as that
 *                                 user (kept in the URL as ?user=U0BOB, so tabs can differ)
 *   #demo-banner                  present only when Config.Banner is set
 *   [data-channel="C0GENERAL"]    channel list items (click to open); #channel is the open
 *                                 channel's pane
 *   .message[data-ts="<ts>"]      a message; class "bot" for the bot's, "ephemeral" for
 *                                 ephemeral ones; its text/blocks are in .message-body
 *   [data-thread-open="<ts>"]     the reply count link of a parent with replies; opens #thread,
 *                                 the thread pane, which lists its messages the same way
 *   #composer textarea, #composer-send            the channel composer
 *   #thread-composer textarea, #thread-send       the thread composer
 *                                 (Enter sends, Shift+Enter is a newline)
 *   button.block-button[data-action-id][data-ts]  Block Kit buttons; text = the label
 *   button.overflow-button[data-action-id]        overflow menus; open .overflow-item entries
 *                                                 (text = the option's label)
 *   select.block-select[data-action-id]           static selects
 *   #confirm, #confirm-yes, #confirm-no           the confirm dialog of a button or menu
 *   #modal; #modal textarea, #modal input (each with data-block-id and data-action-id);
 *   #modal-submit, #modal-cancel                  a modal opened by views.open
 *   .message-menu-button          on each (non-ephemeral) message; opens .shortcut-item entries
 *   a.file-link                   href /ui/files/{id}, text = the file name
 *   #status                       "threadwright is thinking…" or empty; in the thread pane
 *                                 when the open thread has the status, else in #channel
 */
'use strict';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

const query = new URLSearchParams(location.search);
const ui = {
  user: query.get('user') || '',
  channel: query.get('channel') || '',
  thread: '',               // ts of the open thread's parent
  threadChannel: '',        // its conversation when not the main pane's (an assistant thread beside it)
  state: null,              // the last GET /ui/state
  users: new Map(),         // id -> user
  seen: null,               // channel id -> the newest ts seen there
  dismissed: new Set(),     // ephemeral messages dismissed (ts)
};

// ---- talking to the emulator ----

async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({user: ui.user, ...body}),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok || !data.ok) throw new Error(data.error || `${res.status} ${res.statusText}`);
  return data;
}

let loading = null;
let reloadAgain = false;

// load fetches the state and renders it; calls during a load coalesce into one more.
function load() {
  if (loading) {
    reloadAgain = true;
    return loading;
  }
  loading = (async () => {
    do {
      reloadAgain = false;
      const q = new URLSearchParams();
      if (ui.user) q.set('user', ui.user);
      if (ui.channel && ui.state) q.set('channel', ui.channel);
      if (ui.threadChannel && ui.state) q.append('channel', ui.threadChannel);
      const res = await fetch('/ui/state?' + q);
      const data = await res.json();
      if (!res.ok) {
        if (ui.channel && res.status === 404) { ui.channel = ''; ui.threadChannel = ''; reloadAgain = true; continue; }
        throw new Error(data.error);
      }
      ui.state = data;
      render();
    } while (reloadAgain);
  })().catch(err => toast(err.message)).finally(() => { loading = null; });
  return loading;
}

let loadTimer = 0;
function scheduleLoad(delay = 30) {
  clearTimeout(loadTimer);
  loadTimer = setTimeout(load, delay);
}

function listen() {
  const events = new EventSource('/ui/events');
  events.onopen = () => scheduleLoad(0);
  events.onmessage = e => {
    const ev = JSON.parse(e.data);
    if (ev.kind === 'closed') {
      events.close();
      toast('The emulator has stopped.', 0);
      return;
    }
    scheduleLoad();
  };
  // A stream the server refuses (a new run has a new session cookie) is not retried.
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) toast('The playground has restarted or stopped: reload the page.', 0);
  };
}

// ---- text ----

const esc = s => String(s ?? '').replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
// unslack undoes Slack's escaping of &, < and > in message text.
const unslack = s => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

const EMOJI = {
  white_check_mark: '✅', heavy_check_mark: '✔️', x: '❌', warning: '⚠️', hourglass: '⌛',
  hourglass_flowing_sand: '⏳', tada: '🎉', memo: '📝', page_facing_up: '📄', bulb: '💡',
  rocket: '🚀', eyes: '👀', '+1': '👍', thumbsup: '👍', '-1': '👎', wave: '👋', sparkles: '✨',
  robot_face: '🤖', arrows_counterclockwise: '🔄', recycle: '♻️', pencil2: '✏️', lock: '🔒',
  question: '❓', exclamation: '❗', star: '⭐', fire: '🔥', heart: '❤️', clipboard: '📋',
  no_entry: '⛔', stop_sign: '🛑', mag: '🔍', link: '🔗', point_right: '👉', thinking_face: '🤔',
};
const emoji = html => html.replace(/:([a-z0-9_+-]+):/g, (m, name) => EMOJI[name] || m);
const plain = t => (t ? emoji(esc(t.text ?? t)) : '');

function link(url, text) {
  if (!/^(https?:|mailto:)/i.test(url)) return esc(text || url);
  return `<a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(text || url)}</a>`;
}

function userName(id) {
  const u = ui.users.get(id);
  return u ? u.name : id;
}

function mention(id, label) {
  const me = id === ui.user ? ' me' : '';
  return `<span class="mention${me}">@${esc(ui.users.has(id) ? userName(id) : label || id)}</span>`;
}

function channelName(id) {
  const c = ui.state.channels.find(c => c.id === id);
  return c ? c.name || userName(ui.state.bot.id) : id;
}

// special renders the inside of Slack's <…>: mentions, channels, links.
function special(inner) {
  const bar = inner.indexOf('|');
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? '' : unslack(inner.slice(bar + 1));
  if (target.startsWith('@')) return mention(target.slice(1), label);
  if (target.startsWith('#')) return `<span class="mention">#${esc(label || channelName(target.slice(1)))}</span>`;
  if (target.startsWith('!')) {
    const name = target.slice(1).split('^')[0];
    return ['here', 'channel', 'everyone'].includes(name) ? `<span class="mention">@${name}</span>` : esc(label || name);
  }
  if (/^(https?:|mailto:)/i.test(target)) return link(unslack(target), label || unslack(target).replace(/^mailto:/i, ''));
  return esc(unslack(`<${inner}>`));
}

// formatText renders Slack mrkdwn (md false) or standard Markdown (md true, the
// markdown block and streamed text): code, links and mentions are set aside first,
// then the rest is escaped, styled and laid out line by line.
function formatText(src, md = false) {
  const held = [];
  const hold = html => `\u0001${held.push(html) - 1}\u0002`;
  let s = String(src ?? '');
  s = s.replace(/\n?```\n?([\s\S]*?)```\n?/g, (_, code) => hold(`<pre class="code-block">${esc(unslack(code))}</pre>`));
  s = s.replace(/`([^`\n]+)`/g, (_, code) => hold(`<code>${esc(unslack(code))}</code>`));
  if (md) {
    s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_, text, url) => hold(link(url, text)));
    s = s.replace(/(^|[\s(])(https?:\/\/[^\s<>)]+)/g, (_, pre, url) => pre + hold(link(url, url)));
  }
  s = s.replace(/<([^<>\n]+)>/g, (_, inner) => hold(special(inner)));
  s = emoji(esc(unslack(s)));
  const span = (mark, tag) => {
    const m = mark.replace(/[*~]/g, '\\$&');
    const re = new RegExp(`(^|[^\\w${m}])${m}(?=\\S)([^\\n]*?\\S)${m}(?![\\w${m}])`, 'g');
    s = s.replace(re, `$1<${tag}>$2</${tag}>`);
  };
  if (md) {
    span('**', 'b'); span('__', 'b'); span('~~', 's'); span('*', 'i'); span('_', 'i');
  } else {
    span('*', 'b'); span('_', 'i'); span('~', 's');
  }
  return lines(s, md).replace(/\u0001(\d+)\u0002/g, (_, i) => held[i]);
}

// lines lays out quotes ("> "), bullet and numbered lists, and in Markdown
// headings and rules; other lines stay text (the body has white-space: pre-wrap).
function lines(s, md) {
  const out = [];
  let list = null;
  let quote = null;
  const flush = () => {
    if (list) out.push(`<${list.tag} start="${list.start}">${list.items.map(i => `<li>${i}</li>`).join('')}</${list.tag}>`);
    if (quote) out.push(`<blockquote>${quote.join('\n')}</blockquote>`);
    list = quote = null;
  };
  for (const line of s.split('\n')) {
    let m;
    if ((m = /^&gt;\s?(.*)$/.exec(line))) {
      if (list) flush();
      (quote ??= []).push(m[1]);
    } else if ((m = /^\s*(?:[•◦▪-]|\*(?!\*)|(\d+)[.)])\s+(.*)$/.exec(line))) {
      if (quote) flush();
      const tag = m[1] ? 'ol' : 'ul';
      if (list && list.tag !== tag) flush();
      (list ??= {tag, start: m[1] || 1, items: []}).items.push(m[2]);
    } else {
      flush();
      if (md && (m = /^(#{1,6})\s+(.*)$/.exec(line))) out.push(`<div class="md-heading">${m[2]}</div>`);
      else if (md && /^\s*([-*_])\s*\1\s*\1[-*_\s]*$/.test(line)) out.push('<hr>');
      else if (typeof out[out.length - 1] === 'object') out[out.length - 1].text += '\n' + line;
      else out.push({text: line});
    }
  }
  flush();
  return out.map(o => (typeof o === 'object' ? o.text : o)).join('');
}

// rich renders rich_text elements, the blocks Slack's composer sends.
function rich(elements = []) {
  const inline = (els = []) => els.map(e => {
    let h;
    switch (e.type) {
      case 'text': h = esc(e.text); break;
      case 'link': h = link(e.url, e.text || e.url); break;
      case 'user': h = mention(e.user_id); break;
      case 'channel': h = `<span class="mention">#${esc(channelName(e.channel_id))}</span>`; break;
      case 'broadcast': h = `<span class="mention">@${esc(e.range)}</span>`; break;
      case 'emoji': h = e.unicode ? String.fromCodePoint(...e.unicode.split('-').map(x => parseInt(x, 16))) : emoji(`:${esc(e.name)}:`); break;
      default: h = esc(e.text || '');
    }
    const st = e.style || {};
    if (st.code) h = `<code>${h}</code>`;
    if (st.bold) h = `<b>${h}</b>`;
    if (st.italic) h = `<i>${h}</i>`;
    if (st.strike) h = `<s>${h}</s>`;
    return h;
  }).join('');
  return elements.map(e => {
    switch (e.type) {
      case 'rich_text_section': return `<div class="rich-section">${inline(e.elements)}</div>`;
      case 'rich_text_quote': return `<blockquote>${inline(e.elements)}</blockquote>`;
      case 'rich_text_preformatted': return `<pre class="code-block">${inline(e.elements)}</pre>`;
      case 'rich_text_list': {
        const tag = e.style === 'ordered' ? 'ol' : 'ul';
        return `<${tag} style="margin-left:${(e.indent || 0) * 1.5}em">${(e.elements || []).map(s => `<li>${inline(s.elements)}</li>`).join('')}</${tag}>`;
      }
      default: return '';
    }
  }).join('');
}

// ---- Block Kit ----

const textObject = t => (!t ? '' : t.type === 'mrkdwn' ? formatText(t.text) : plain(t));

function imageLink(url, alt, title) {
  return `<span class="image-link">🖼 ${link(url || '', title || alt || url || 'image')}</span>`;
}

function blockHTML(b, m) {
  switch (b.type) {
    case 'header': return `<div class="b-header">${plain(b.text)}</div>`;
    case 'section': {
      const fields = b.fields ? `<div class="b-fields">${b.fields.map(f => `<div>${textObject(f)}</div>`).join('')}</div>` : '';
      const accessory = b.accessory ? `<div class="b-accessory">${elementHTML(b.accessory, m)}</div>` : '';
      return `<div class="b-section"><div class="b-text">${textObject(b.text)}${fields}</div>${accessory}</div>`;
    }
    case 'context': return `<div class="b-context">${(b.elements || []).map(e =>
      e.type === 'image' ? imageLink(e.image_url, e.alt_text) : `<span>${textObject(e)}</span>`).join('')}</div>`;
    case 'divider': return '<hr class="b-divider">';
    case 'actions': return `<div class="b-actions">${(b.elements || []).map(e => elementHTML(e, m)).join('')}</div>`;
    case 'context_actions': return `<div class="b-actions b-feedback">${(b.elements || []).map(e => feedbackHTML(e, m)).join('')}</div>`;
    case 'markdown': return `<div class="b-markdown">${formatText(b.text, true)}</div>`;
    case 'rich_text': return `<div class="b-rich">${rich(b.elements)}</div>`;
    case 'image': return `<div class="b-image">${imageLink(b.image_url || b.slack_file?.url, b.alt_text, b.title?.text)}</div>`;
    case 'task_card': return taskHTML(b);
    case 'plan': return `<div class="b-plan"><div class="b-plan-title">${esc(b.title)}</div>${(b.tasks || []).map(taskHTML).join('')}</div>`;
    case 'video': return `<div class="b-image">▶ ${link(b.video_url, b.title?.text || b.video_url)}</div>`;
    default: return `<div class="b-unknown">[${esc(b.type)} block]</div>`;
  }
}

function elementHTML(e, m) {
  const data = `data-action-id="${esc(e.action_id || '')}" data-ts="${esc(m.ts)}"` +
    (e.confirm ? ` data-confirm="${esc(JSON.stringify(e.confirm))}"` : '');
  switch (e.type) {
    case 'button':
      return `<button type="button" class="block-button${e.style ? ' ' + esc(e.style) : ''}" ${data} data-value="${esc(e.value ?? '')}"` +
        `${e.url ? ` data-url="${esc(e.url)}"` : ''}>${plain(e.text)}</button>`;
    case 'overflow':
      return `<button type="button" class="overflow-button" ${data} data-options="${esc(JSON.stringify(e.options || []))}"` +
        ' title="More options" aria-label="More options" aria-haspopup="menu">⋮</button>';
    case 'static_select': {
      const chosen = e.initial_option?.value;
      const option = o => `<option value="${esc(o.value)}"${o.value === chosen ? ' selected' : ''}>${plain(o.text)}</option>`;
      const options = e.option_groups
        ? e.option_groups.map(g => `<optgroup label="${esc(g.label?.text)}">${g.options.map(option).join('')}</optgroup>`).join('')
        : (e.options || []).map(option).join('');
      return `<select class="block-select" ${data}><option value="" disabled${chosen ? '' : ' selected'}>` +
        `${plain(e.placeholder) || 'Select an item'}</option>${options}</select>`;
    }
    case 'image': return imageLink(e.image_url, e.alt_text);
    default: return `<span class="b-unknown">[${esc(e.type)}]</span>`;
  }
}

// feedbackHTML draws a feedback_buttons element as two buttons labelled with their
// texts (Slack draws thumbs up and down, with the texts as tooltips); a click sends
// the clicked button's value, as Slack does.
function feedbackHTML(e, m) {
  if (e.type !== 'feedback_buttons') return `<span class="b-unknown">[${esc(e.type)}]</span>`;
  const button = b => !b ? '' :
    `<button type="button" class="block-button feedback-button" data-action-id="${esc(e.action_id || '')}" data-ts="${esc(m.ts)}"` +
    ` data-value="${esc(b.value ?? '')}" aria-label="${esc(b.accessibility_label || b.text?.text || '')}">${plain(b.text)}</button>`;
  return button(e.positive_button) + button(e.negative_button);
}

function attachmentsHTML(attachments) {
  const colors = {good: '#2eb67d', warning: '#ecb22e', danger: '#e01e5a'};
  return attachments.map(a => {
    const color = colors[a.color] || (/^#?[0-9a-f]{6}$/i.test(a.color || '') ? '#' + a.color.replace('#', '') : '#ddd');
    const title = a.title ? `<div class="b-header small">${a.title_link ? link(a.title_link, a.title) : esc(a.title)}</div>` : '';
    const blocks = (a.blocks || []).map(b => blockHTML(b, {ts: ''})).join('');
    return `<div class="attachment" style="border-color:${color}">${a.pretext ? formatText(a.pretext) : ''}${title}` +
      `${a.text ? formatText(a.text) : ''}${blocks}</div>`;
  }).join('');
}

// ---- messages ----

function author(m) {
  const bot = ui.state.bot;
  if (m.user === bot.id) return {id: bot.id, name: bot.name, app: true};
  if (m.subtype === 'bot_message' || (!m.user && m.bot_id)) return {id: m.bot_id, name: m.username || m.bot_id, app: true};
  const u = ui.users.get(m.user);
  return {id: m.user, name: u ? u.real_name || u.name : m.user || 'unknown', app: false};
}

function avatar(a) {
  let h = 0;
  for (const c of a.id || '') h = (h * 31 + c.charCodeAt(0)) % 360;
  const color = a.id === ui.state.bot.id ? '#611f69' : `hsl(${h} 55% 42%)`;
  const initials = a.name.split(/\s+/).map(w => w[0]).join('').slice(0, 2).toUpperCase();
  return `<div class="avatar" style="background:${color}" aria-hidden="true">${esc(initials)}</div>`;
}

const tsDate = ts => new Date(parseFloat(ts) * 1000);
const clock = ts => tsDate(ts).toLocaleTimeString([], {hour: 'numeric', minute: '2-digit'});

function bodyHTML(m) {
  if (m.subtype === 'tombstone') return '<em class="muted">This message was deleted.</em>';
  let html = '';
  if (m.tasks?.length) html += tasksHTML(m);
  if (m.markdown) html += formatText(m.text, true) + (m.blocks || []).map(b => blockHTML(b, m)).join('');
  else if (m.blocks?.length) html = m.blocks.map(b => blockHTML(b, m)).join('');
  else html = formatText(m.text);
  if (m.attachments) html += attachmentsHTML(m.attachments);
  if (m.streaming) html += '<span class="cursor" aria-hidden="true"></span>';
  return html;
}

// taskHTML renders a task card (a task_update chunk's state, or a task_card block).
const taskIcons = {pending: '○', in_progress: '◔', complete: '✓', error: '✕'};
function taskHTML(t) {
  const output = typeof t.output === 'string' ? t.output : t.output ? rich(t.output.elements) : '';
  const sources = (t.sources || []).map(s => link(s.url, s.text)).join('');
  return `<div class="b-task" data-task-id="${esc(t.id || t.task_id)}" data-status="${esc(t.status)}">` +
    `<span class="b-task-icon" aria-label="${esc(t.status)}">${taskIcons[t.status] || '○'}</span>` +
    `<div class="b-task-body"><div class="b-task-title">${esc(t.title)}</div>` +
    (output ? `<div class="b-task-output">${typeof t.output === 'string' ? esc(output) : output}</div>` : '') +
    (sources ? `<div class="b-task-sources">${sources}</div>` : '') + '</div></div>';
}

// tasksHTML renders a streamed message's tasks: a plan (task_display_mode plan)
// or a timeline.
function tasksHTML(m) {
  const cards = m.tasks.map(taskHTML).join('');
  if (m.task_display_mode === 'plan') {
    return `<div class="b-plan"><div class="b-plan-title">${esc(m.plan_title || 'Plan')}</div>${cards}</div>`;
  }
  return `<div class="b-timeline">${cards}</div>`;
}

function sizeText(n) {
  return n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KB` : `${(n / (1 << 20)).toFixed(1)} MB`;
}

function messageHTML(m, {continued = false, inThread = false} = {}) {
  const a = author(m);
  const classes = ['message'];
  if (m.user === ui.state.bot.id) classes.push('bot');
  if (m.ephemeral) classes.push('ephemeral');
  if (continued) classes.push('continued');
  if (m.streaming) classes.push('streaming');
  const files = (m.files || []).map(f => `<div class="file"><span class="file-icon" aria-hidden="true">📄</span><div>` +
    `<a class="file-link" href="/ui/files/${encodeURIComponent(f.id)}" download="${esc(f.name)}">${esc(f.name)}</a>` +
    `<div class="muted small">${f.title && f.title !== f.name ? esc(f.title) + ' · ' : ''}${sizeText(f.size)}</div></div></div>`).join('');
  const reactions = (m.reactions || []).map(r => `<span class="reaction" title="${esc(r.users.map(userName).join(', '))}">` +
    `${emoji(`:${esc(r.name)}:`)} ${r.users.length}</span>`).join('');
  const replies = !inThread && m.reply_count
    ? `<button type="button" class="thread-link" data-thread-open="${esc(m.ts)}">${m.reply_count} ${m.reply_count === 1 ? 'reply' : 'replies'}</button>` : '';
  const note = m.ephemeral
    ? `<div class="ephemeral-note">Only visible to you · <button type="button" class="link-button" data-dismiss="${esc(m.ts)}">Dismiss</button></div>` : '';
  const threadOf = m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : m.ts;
  const tools = m.ephemeral || m.subtype === 'tombstone' ? '' : `<div class="message-actions">` +
    (inThread ? '' : `<button type="button" class="icon-button" data-reply="${esc(threadOf)}" title="Reply in thread" aria-label="Reply in thread">💬</button>`) +
    `<button type="button" class="icon-button message-menu-button" data-ts="${esc(m.ts)}" title="More actions" aria-label="More actions" aria-haspopup="menu">⋯</button></div>`;
  return `<div class="${classes.join(' ')}" data-ts="${esc(m.ts)}">${avatar(a)}<div class="message-main">` +
    `<div class="message-head"><span class="author">${esc(a.name)}</span>${a.app ? '<span class="app-badge">APP</span>' : ''}` +
    `<time datetime="${tsDate(m.ts).toISOString()}" title="${esc(tsDate(m.ts).toLocaleString())}">${clock(m.ts)}</time>` +
    `${m.edited ? '<span class="muted small">(edited)</span>' : ''}${m.broadcast ? '<span class="muted small">replied to a thread</span>' : ''}</div>` +
    `<div class="message-body">${bodyHTML(m)}</div>${files}${reactions ? `<div class="reactions">${reactions}</div>` : ''}${replies}${note}</div>${tools}</div>`;
}

// messageItems renders a list of messages, folding the head of a message into the
// one before when the same person wrote both within five minutes, as Slack does.
function messageItems(msgs, inThread) {
  return msgs.map((m, i) => {
    const prev = msgs[i - 1];
    const continued = !!prev && !prev.ephemeral && !m.ephemeral && author(prev).id === author(m).id &&
      !prev.reply_count && parseFloat(m.ts) - parseFloat(prev.ts) < 300;
    return {key: m.ts, html: messageHTML(m, {continued, inThread})};
  });
}

// renderList shows items ({key, html}) in box, keeping the nodes whose HTML is
// unchanged (so an open select or a focused button survives a reload) and the scroll
// position, unless the list was scrolled to its end.
function renderList(box, items, toEnd = false) {
  const atEnd = toEnd || box.scrollHeight - box.scrollTop - box.clientHeight < 60;
  const old = new Map([...box.children].map(n => [n.dataset.key, n]));
  const nodes = items.map(({key, html}) => {
    const n = old.get(key);
    if (n && n._html === html) return n;
    const t = document.createElement('template');
    t.innerHTML = html;
    const fresh = t.content.firstElementChild;
    fresh.dataset.key = key;
    fresh._html = html;
    return fresh;
  });
  if (nodes.length !== box.children.length || nodes.some((n, i) => box.children[i] !== n)) box.replaceChildren(...nodes);
  if (atEnd) box.scrollTop = box.scrollHeight;
}

// ---- rendering the state ----

const people = () => ui.state.users.filter(u => !u.is_bot);
const currentChannel = () => ui.state.channels.find(c => c.id === ui.channel);
// threadChannel is the conversation of the open thread: the channel in the main pane,
// or the DM of an assistant thread opened beside it (ui.threadChannel).
const threadChannel = () => ui.threadChannel || ui.channel;
const channelLabel = c => (c.type === 'im' ? ui.state.bot.name : c.name);
const visible = m => !ui.dismissed.has(m.ts);

function render() {
  const s = ui.state;
  ui.user = s.user;
  ui.users = new Map(s.users.map(u => [u.id, u]));
  if (!currentChannel()) {
    ui.channel = s.channels[0]?.id || '';
    ui.thread = '';
    ui.threadChannel = '';
  }
  if (!ui.seen) ui.seen = Object.fromEntries(s.channels.map(c => [c.id, c.latest || '']));
  ui.seen[ui.channel] = currentChannel()?.latest || '';
  document.title = s.title;
  history.replaceState(null, '', `?${new URLSearchParams({user: ui.user, channel: ui.channel})}`);

  const picker = $('#user-picker');
  const options = people().map(u => `<option value="${esc(u.id)}">${esc(u.real_name || u.name)} (@${esc(u.name)})</option>`).join('');
  if (picker._html !== options) { picker.innerHTML = options; picker._html = options; }
  picker.value = ui.user;

  const item = c => `<li><button type="button" class="channel-item${c.id === ui.channel ? ' active' : ''}` +
    `${(c.latest || '') > (ui.seen[c.id] || '') ? ' unread' : ''}" data-channel="${esc(c.id)}">` +
    (c.type === 'im'
      ? `<span class="presence${s.connected ? ' on' : ''}" aria-hidden="true"></span>${esc(channelLabel(c))}<span class="app-badge">APP</span>`
      : `<span class="hash" aria-hidden="true">#</span>${esc(c.name)}`) + '</button></li>';
  const setHTML = (node, html) => { if (node._html !== html) { node.innerHTML = html; node._html = html; } };
  setHTML($('#channel-list'), s.channels.filter(c => c.type !== 'im').map(item).join(''));
  setHTML($('#dm-list'), s.channels.filter(c => c.type === 'im').map(item).join(''));
  const conn = $('#connection');
  conn.textContent = s.connected ? '● bot connected' : '○ bot not connected';
  conn.classList.toggle('on', s.connected > 0);

  renderChannel();
  renderThread();
  renderStatus();
  renderModal();
  clearTimeout(render.statusTimer);
  if (s.statuses.length) render.statusTimer = setTimeout(() => scheduleLoad(0), 15000); // statuses expire
}

function renderChannel() {
  const c = currentChannel();
  if (!c) return;
  const label = c.type === 'im' ? channelLabel(c) : `#${c.name}`;
  $('#channel-title').textContent = label;
  $('#channel-about').textContent = c.type === 'im' ? 'Direct message with the app' : '';
  $('#composer textarea').placeholder = `Message ${label}`;
  const msgs = (ui.state.messages[c.id] || []).filter(m => visible(m) && (!m.thread_ts || m.thread_ts === m.ts || m.broadcast));
  renderList($('#messages'), msgs.length ? messageItems(msgs, false) : [{key: 'empty', html: emptyHint(c)}]);
}

// emptyHint is what an empty channel shows: what to try in it.
function emptyHint(c) {
  const bot = esc(ui.state.bot.name);
  const tries = c.type === 'im'
    ? [`what time is it in Tokyo?`, `what is 17 * 23?`]
    : [`@${bot} what is 17 * 23?`, `/${bot} start product-brief`, `/${bot} start blog Go generics for data engineers`];
  return `<div class="empty-hint"><p>Nothing here yet. Try one of these:</p><ul>` +
    tries.map(t => `<li><code>${esc(t)}</code></li>`).join('') + `</ul></div>`;
}

function renderThread() {
  const pane = $('#thread');
  const tc = threadChannel();
  const msgs = ui.state.messages[tc] || [];
  const parent = ui.thread && msgs.find(m => m.ts === ui.thread);
  if (!parent) {
    ui.thread = '';
    pane.hidden = true;
    return;
  }
  const replies = msgs.filter(m => m.thread_ts === ui.thread && m.ts !== ui.thread && visible(m));
  const count = replies.filter(m => !m.ephemeral).length;
  const assistant = (ui.state.assistant || []).find(a => a.channel === tc && a.thread_ts === ui.thread);
  const session = (ui.state.sessions || []).find(x => x.channel === tc && x.thread_ts === ui.thread);
  $('#thread-title').textContent = session?.title || (assistant ? (assistant.title || 'New chat') : 'Thread');
  // The agent session's status, and the person's native Stop and rename (the agent view).
  const sess = $('#thread-session');
  sess.hidden = !session;
  if (session) {
    $('#session-status').textContent = session.status;
    $('#session-status').dataset.status = session.status;
    $('#session-stop').disabled = session.status !== 'processing';
  }
  const prompts = assistant?.prompts?.length ? [{key: 'prompts', html: `<div class="prompts"><div class="prompts-title">${esc(assistant.prompts_title || 'Suggested prompts')}</div>${
    assistant.prompts.map(p => `<button type="button" class="prompt" data-prompt="${esc(p.message)}">${esc(p.title)}</button>`).join('')}</div>`}] : [];
  const c = ui.state.channels.find(ch => ch.id === tc);
  $('#thread-about').textContent = c.type === 'im' ? channelLabel(c) : `#${c.name}`;
  const wasHidden = pane.hidden;
  pane.hidden = false;
  renderList($('#thread-messages'), [
    {key: 'parent', html: messageHTML(parent, {inThread: true})},
    {key: 'count', html: `<div class="thread-count">${count} ${count === 1 ? 'reply' : 'replies'}</div>`},
    ...messageItems(replies, true),
    ...prompts,
  ], wasHidden);
}

function renderStatus() {
  const status = $('#status');
  const here = ui.state.statuses.filter(s => s.channel === ui.channel);
  const inThread = ui.thread && ui.state.statuses.find(s => s.channel === threadChannel() && s.thread_ts === ui.thread);
  const shown = inThread || here[0];
  const bot = ui.state.bot.name;
  const text = !shown ? '' : shown.status.startsWith(bot) ? shown.status : `${bot} ${shown.status}`;
  const home = inThread ? $('#thread') : $('#channel');
  const composer = inThread ? $('#thread-composer') : $('#composer');
  if (status.parentNode !== home) home.insertBefore(status, composer);
  if (status.textContent !== text) status.textContent = text;
}

// ---- modals ----

let modalSig = '';

function inputHTML(b, i) {
  const e = b.element || {};
  const id = `modal-input-${i}`;
  const ids = `id="${id}" data-block-id="${esc(b.block_id || `block${i}`)}" data-action-id="${esc(e.action_id || `action${i}`)}"` +
    `${b.optional ? '' : ' required'}${e.max_length ? ` maxlength="${e.max_length}"` : ''}` +
    `${e.placeholder ? ` placeholder="${esc(e.placeholder.text)}"` : ''}`;
  const label = `<label class="input-label" for="${id}">${plain(b.label)}${b.optional ? ' <span class="muted">(optional)</span>' : ''}</label>`;
  let field;
  if (e.type !== 'plain_text_input') field = `<div class="b-unknown">[${esc(e.type)} inputs are not supported here]</div>`;
  else if (e.multiline) field = `<textarea rows="5" ${ids}>${esc(e.initial_value)}</textarea>`;
  else field = `<input type="text" ${ids} value="${esc(e.initial_value)}">`;
  const error = `<div class="input-error small" data-error-for="${esc(b.block_id || `block${i}`)}"></div>`;
  return `<div class="modal-input">${label}${field}${error}${b.hint ? `<div class="muted small">${plain(b.hint)}</div>` : ''}</div>`;
}

function renderModal() {
  const modal = $('#modal');
  const v = ui.state.view;
  if (!v) {
    modal.hidden = true;
    modalSig = '';
    return;
  }
  const sig = v.id + JSON.stringify(v.view);
  if (sig !== modalSig) {
    modalSig = sig;
    modal.dataset.viewId = v.id;
    const view = v.view;
    $('#modal-title').textContent = view.title?.text || '';
    $('#modal-submit').textContent = view.submit?.text || 'Submit';
    $('#modal-submit').hidden = !view.submit && !(view.blocks || []).some(b => b.type === 'input');
    $('#modal-cancel').textContent = view.close?.text || 'Cancel';
    $('#modal-body').innerHTML = (view.blocks || []).map((b, i) => (b.type === 'input' ? inputHTML(b, i) : blockHTML(b, {ts: ''}))).join('');
    $('#modal-error').textContent = '';
    modal.hidden = false;
    $('#modal-body textarea, #modal-body input')?.focus();
  }
  // The bot's answer to a submission: messages under the inputs (response_action "errors").
  for (const el of $$('#modal-body [data-error-for]')) el.textContent = (v.errors || {})[el.dataset.errorFor] || '';
  $('#modal-submit').disabled = v.submitting;
  modal.classList.toggle('submitting', v.submitting);
}

async function submitModal(e) {
  e.preventDefault();
  const fields = $$('#modal-body textarea, #modal-body input');
  const empty = fields.find(f => f.required && !f.value.trim());
  if (empty) {
    $('#modal-error').textContent = 'Please complete this required field.';
    empty.focus();
    return;
  }
  const values = {};
  for (const f of fields) (values[f.dataset.blockId] ??= {})[f.dataset.actionId] = f.value;
  try {
    $('#modal-submit').disabled = true;
    await post('/ui/submit', {view_id: $('#modal').dataset.viewId, values});
  } catch (err) {
    $('#modal-error').textContent = err.message;
    $('#modal-submit').disabled = false;
  }
}

async function cancelModal() {
  const modal = $('#modal');
  if (modal.hidden) return;
  modal.hidden = true;
  try {
    await post('/ui/close', {view_id: modal.dataset.viewId});
  } catch (err) {
    toast(err.message);
  }
}

// ---- menus, confirm dialogs and toasts ----

function openMenu(anchor, items) {
  const menu = $('#menu');
  menu.replaceChildren(...items.map(item => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = `menu-item ${item.className}`;
    b.setAttribute('role', 'menuitem');
    b.textContent = item.label;
    if (item.note) b.dataset.note = item.note;
    b.addEventListener('click', () => { closeMenu(); item.run(); });
    return b;
  }));
  menu.hidden = false;
  const r = anchor.getBoundingClientRect();
  const below = r.bottom + menu.offsetHeight + 8 < innerHeight;
  menu.style.left = `${Math.max(8, Math.min(r.left, innerWidth - menu.offsetWidth - 8))}px`;
  menu.style.top = `${below ? r.bottom + 4 : r.top - menu.offsetHeight - 4}px`;
  menu._anchor = anchor;
  menu.firstElementChild?.focus();
}

function closeMenu() {
  $('#menu').hidden = true;
}

let confirmed = null;

// confirmThen runs run after the user confirms (when confirm, a Block Kit
// confirmation object, is given), or deny when they do not.
function confirmThen(confirm, run, deny = () => {}) {
  if (!confirm) return run();
  $('#confirm-title').textContent = confirm.title?.text || 'Are you sure?';
  $('#confirm-text').innerHTML = textObject(confirm.text);
  $('#confirm-yes').textContent = confirm.confirm?.text || 'Yes';
  $('#confirm-yes').className = confirm.style === 'danger' ? 'danger' : 'primary';
  $('#confirm-no').textContent = confirm.deny?.text || 'Cancel';
  confirmed = {run, deny};
  $('#confirm').hidden = false;
  $('#confirm-yes').focus();
}

function answerConfirm(yes) {
  $('#confirm').hidden = true;
  const c = confirmed;
  confirmed = null;
  if (c) (yes ? c.run : c.deny)();
}

let toastTimer = 0;
function toast(text, ms = 5000) {
  const t = $('#toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  if (ms) toastTimer = setTimeout(() => { t.hidden = true; }, ms);
}

// ---- acting on messages ----

async function act(path, body, node) {
  node?.classList.add('busy');
  try {
    // A node in the thread pane (or none: the session's rename) acts in the thread's
    // conversation, which may be the DM beside the channel.
    await post(path, {channel: !node || node.closest('#thread') ? threadChannel() : ui.channel, ...body});
  } catch (err) {
    toast(err.message);
  } finally {
    setTimeout(() => node?.classList.remove('busy'), 500);
  }
}

const confirmOf = node => (node.dataset.confirm ? JSON.parse(node.dataset.confirm) : null);

function clickButton(b) {
  confirmThen(confirmOf(b), () => {
    if (b.dataset.url) window.open(b.dataset.url, '_blank', 'noopener');
    act('/ui/click', {ts: b.dataset.ts, action_id: b.dataset.actionId, value: b.dataset.value}, b);
  });
}

function openOverflow(b) {
  const options = JSON.parse(b.dataset.options);
  openMenu(b, options.map(o => ({
    label: o.text?.text ?? '',
    className: 'overflow-item',
    run: () => confirmThen(confirmOf(b), () => {
      if (o.url) window.open(o.url, '_blank', 'noopener');
      act('/ui/choose', {ts: b.dataset.ts, action_id: b.dataset.actionId, value: o.value}, b);
    }),
  })));
}

function chooseSelect(sel) {
  const previous = sel._value ?? '';
  confirmThen(confirmOf(sel), () => {
    sel._value = sel.value;
    act('/ui/choose', {ts: sel.dataset.ts, action_id: sel.dataset.actionId, value: sel.value}, sel);
  }, () => { sel.value = previous; });
}

function openShortcuts(b) {
  const shortcuts = ui.state.shortcuts || [];
  if (!shortcuts.length) return toast('The app has no message shortcuts.');
  openMenu(b, shortcuts.map(sc => ({
    label: sc.name,
    note: ui.state.bot.name,
    className: 'shortcut-item',
    run: () => act('/ui/shortcut', {ts: b.dataset.ts, callback_id: sc.callback_id}, b),
  })));
}

function openThread(ts) {
  ui.thread = ts;
  ui.threadChannel = '';
  renderThread();
  renderStatus();
  $('#thread-composer textarea').focus();
}

// openAssistant opens the app's assistant view beside the current channel: a new
// assistant thread in the DM, the channel as its context.
async function openAssistant() {
  try {
    const a = await post('/ui/assistant', {context: ui.channel});
    // The channel stays in the main pane; the assistant thread opens beside it.
    ui.threadChannel = a.channel === ui.channel ? '' : a.channel;
    ui.thread = a.thread_ts;
    await load();
    renderThread();
    renderStatus();
    $('#thread-composer textarea').focus();
  } catch (err) {
    toast(`Assistant not opened: ${err.message}`);
  }
}

// openMessagesTab opens the app's Messages tab (the agent view): the DM, with the
// channel viewed last as the app's context (app_context_changed, app_home_opened).
async function openMessagesTab() {
  try {
    const m = await post('/ui/messages', {context: ui.channel});
    ui.channel = m.channel;
    ui.thread = '';
    ui.threadChannel = '';
    await load();
    render();
  } catch (err) {
    toast(`Messages tab not opened: ${err.message}`);
  }
}

// renameSession renames the open thread's agent session as the person
// (agent_session_title_changed).
async function renameSession() {
  const title = prompt('Session title', $('#thread-title').textContent);
  if (title && title.trim()) await act('/ui/session', {thread_ts: ui.thread, action: 'rename', title: title.trim()});
}

// ---- composers ----

function isCommand(text) {
  return /^\/[^\s/]/.test(text);
}

function setupComposer(form, thread, channel) {
  const box = $('textarea', form);
  const note = $('.composer-note', form);
  let sending = false;
  const send = async () => {
    const text = box.value.trim();
    if (!text || sending) return;
    sending = true;
    try {
      await post('/ui/post', {channel: channel(), text, thread_ts: thread()});
      box.value = '';
      note.textContent = '';
      grow();
    } catch (err) {
      note.textContent = err.message;
    } finally {
      sending = false;
    }
  };
  const grow = () => {
    box.style.height = 'auto';
    box.style.height = `${Math.min(box.scrollHeight, 200)}px`;
  };
  form.addEventListener('submit', e => { e.preventDefault(); send(); });
  box.addEventListener('keydown', e => {
    if (completionKey(e, box)) return;
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  box.addEventListener('input', () => {
    grow();
    const cmd = thread() && isCommand(box.value) ? box.value.split(/\s/)[0] : '';
    note.textContent = cmd ? `${cmd} is not supported in threads: use it in the channel, or mention @${ui.state.bot.name} here.` : '';
    complete(box, !!thread());
  });
  box.addEventListener('blur', () => setTimeout(closeCompletion, 150));
}

// ---- autocomplete of @names and /commands ----

const completion = {box: null, items: [], index: 0};

function complete(box, inThread) {
  const before = box.value.slice(0, box.selectionStart);
  let m;
  let items = [];
  if ((m = /(^|\s)@([\w.-]*)$/.exec(before))) {
    const prefix = m[2].toLowerCase();
    const from = before.length - m[2].length - 1;
    items = ui.state.users.filter(u => u.name.toLowerCase().startsWith(prefix) && (u.id === ui.state.bot.id || !u.is_bot))
      .map(u => ({label: `@${u.name}`, detail: u.is_bot ? 'app' : u.real_name, from, insert: `@${u.name} `}));
  } else if (!inThread && (m = /^\/([\w-]*)$/.exec(before))) {
    items = (ui.state.commands || []).filter(c => c.startsWith(before))
      .map(c => ({label: c, detail: `${ui.state.bot.name} command`, from: 0, insert: `${c} `}));
  }
  Object.assign(completion, {box, items, index: 0});
  const list = $('#autocomplete');
  if (!items.length) return closeCompletion();
  list.innerHTML = items.map((it, i) => `<li role="option" data-index="${i}"${i === 0 ? ' aria-selected="true"' : ''}>` +
    `<b>${esc(it.label)}</b> <span class="muted">${esc(it.detail)}</span></li>`).join('');
  list.hidden = false;
  const r = box.closest('.composer').getBoundingClientRect();
  list.style.left = `${r.left + 12}px`;
  list.style.bottom = `${innerHeight - r.top + 4}px`;
}

function pickCompletion(i) {
  const {box, items} = completion;
  const it = items[i];
  if (!it) return;
  const end = box.selectionStart;
  box.value = box.value.slice(0, it.from) + it.insert + box.value.slice(end);
  box.selectionStart = box.selectionEnd = it.from + it.insert.length;
  closeCompletion();
  box.focus();
}

function closeCompletion() {
  $('#autocomplete').hidden = true;
  completion.items = [];
}

// completionKey handles the keys of an open autocomplete list and reports whether it did.
function completionKey(e, box) {
  if (!completion.items.length || completion.box !== box) return false;
  const n = completion.items.length;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    completion.index = (completion.index + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
    $$('#autocomplete li').forEach((li, i) => li.setAttribute('aria-selected', String(i === completion.index)));
  } else if (e.key === 'Enter' || e.key === 'Tab') {
    const it = completion.items[completion.index];
    const typed = box.value.slice(it.from, box.selectionStart);
    if (e.key === 'Enter' && typed === it.insert.trim()) {
      closeCompletion(); // the name is complete: Enter sends
      return false;
    }
    pickCompletion(completion.index);
  } else if (e.key === 'Escape') {
    closeCompletion();
  } else {
    return false;
  }
  e.preventDefault();
  return true;
}

// ---- wiring ----

document.addEventListener('click', e => {
  const t = e.target.closest('button, a, li[data-index]');
  const menu = $('#menu');
  if (!menu.hidden && !menu.contains(e.target) && (!t || t !== menu._anchor)) closeMenu();
  if (!t) return;
  const d = t.dataset;
  if (d.channel !== undefined) {
    ui.channel = d.channel;
    ui.thread = '';
    ui.threadChannel = '';
    render();
    load();
    $('#composer textarea').focus();
  } else if (d.threadOpen) openThread(d.threadOpen);
  else if (d.reply) openThread(d.reply);
  else if (d.dismiss) { ui.dismissed.add(d.dismiss); render(); }
  else if (d.prompt !== undefined) act('/ui/post', {channel: threadChannel(), text: d.prompt, thread_ts: ui.thread}, t);
  else if (t.id === 'assistant-open') openAssistant();
  else if (t.id === 'messages-open') openMessagesTab();
  else if (t.id === 'session-stop') act('/ui/session', {thread_ts: ui.thread, action: 'stop'}, t);
  else if (t.id === 'session-rename') renameSession();
  else if (t.classList.contains('block-button')) clickButton(t);
  else if (t.classList.contains('overflow-button')) (menu.hidden || menu._anchor !== t ? openOverflow(t) : closeMenu());
  else if (t.classList.contains('message-menu-button')) (menu.hidden || menu._anchor !== t ? openShortcuts(t) : closeMenu());
  else if (d.index !== undefined) pickCompletion(Number(d.index));
});

document.addEventListener('mousedown', e => {
  if (e.target.closest('#autocomplete')) e.preventDefault(); // keep the composer's focus
});

document.addEventListener('change', e => {
  if (e.target.id === 'user-picker') {
    ui.user = e.target.value;
    ui.thread = '';
    ui.threadChannel = '';
    ui.seen = null;
    ui.dismissed.clear();
    modalSig = '';
    load();
  } else if (e.target.classList.contains('block-select')) chooseSelect(e.target);
});

document.addEventListener('focusin', e => {
  if (e.target.classList?.contains('block-select')) e.target._value ??= e.target.value;
});

document.addEventListener('keydown', e => {
  if (e.key !== 'Escape') return;
  if (!$('#confirm').hidden) answerConfirm(false);
  else if (!$('#menu').hidden) closeMenu();
  else if (!$('#modal').hidden) cancelModal();
});

$('#confirm-yes').addEventListener('click', () => answerConfirm(true));
$('#confirm-no').addEventListener('click', () => answerConfirm(false));
$('#modal form').addEventListener('submit', submitModal);
$('#modal-cancel').addEventListener('click', cancelModal);
$('[data-modal-dismiss]').addEventListener('click', cancelModal);
$('#thread-close').addEventListener('click', () => { ui.thread = ''; ui.threadChannel = ''; render(); });
setupComposer($('#composer'), () => '', () => ui.channel);
setupComposer($('#thread-composer'), () => ui.thread, threadChannel);

load();
listen();
