// SPDX-License-Identifier: MIT
import PrintableText

/// The coach page, whole (no CDN, no build step): the sign-in form, and the page that
/// draws `/coach/api/state` every 2 s and posts the coach's actions. Made for a phone
/// (390×844) and a tablet (1024×768); every control has the `data-testid` docs/coach.md lists.
enum CoachHTML {
    static let style = """
    *{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
    body{margin:0;font:16px/1.4 "DejaVu Sans","Liberation Sans",Arial,sans-serif;background:#0d1117;color:#f0f3f6}
    header{display:flex;align-items:center;justify-content:space-between;gap:.5rem;padding:.6rem 1rem;background:#161b22;border-bottom:1px solid #30363d;position:sticky;top:0;z-index:2}
    header h1{font-size:1.15rem;margin:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
    main{max-width:1100px;margin:0 auto;padding:.8rem}
    section{background:#161b22;border:1px solid #30363d;border-radius:10px;padding:.8rem;margin-bottom:.8rem}
    h2{font-size:1.05rem;margin:0 0 .6rem}
    label{display:flex;flex-direction:column;gap:.2rem;font-size:.85rem;color:#9aa3ad}
    input,select,button{font:inherit;min-height:44px;border-radius:8px;border:1px solid #30363d;background:#0d1117;color:#f0f3f6;padding:0 .7rem}
    button{background:#238636;border-color:#2ea043;color:#fff;font-weight:bold;cursor:pointer}
    button.quiet{background:#21262d;border-color:#30363d;font-weight:normal}
    button.stop{background:#b3261e;border-color:#d1242f}
    button:disabled{opacity:.5}
    .row{display:flex;flex-wrap:wrap;gap:.6rem;align-items:flex-end}
    .row label{flex:1 1 9rem}
    #class-running{display:flex;flex-wrap:wrap;align-items:center;gap:.8rem}
    #class-timer{font-size:2rem;font-weight:bold;font-variant-numeric:tabular-nums}
    .hidden{display:none!important}
    #straps{display:grid;grid-template-columns:repeat(auto-fill,minmax(290px,1fr));gap:.6rem}
    .strap{border:1px solid #30363d;border-left:6px solid #6e7681;border-radius:8px;padding:.5rem .6rem;display:flex;flex-direction:column;gap:.35rem;background:#0d1117}
    .strap[data-state=streaming]{border-left-color:#2ea043}.strap[data-state=advertised]{border-left-color:#1f6fd1}
    .strap[data-state=waiting-for-link],.strap[data-state=waiting],.strap[data-state=backing-off],.strap[data-state=connecting],.strap[data-state=resolving]{border-left-color:#d97706}
    .strap .top{display:flex;justify-content:space-between;gap:.4rem;align-items:baseline}
    .strap .who{font-weight:bold;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
    .strap .hr{font-size:1.4rem;font-weight:bold;font-variant-numeric:tabular-nums;white-space:nowrap;flex:0 0 auto}
    .strap .state{font-size:.85rem;color:#c9d1d9}.strap .why{font-size:.8rem;color:#f5a524}
    .strap[data-state=streaming] .why,.strap[data-state=advertised] .why{color:#8b949e}
    .strap .addr{font-size:.75rem;color:#8b949e}
    .strap .actions{display:flex;gap:.4rem;flex-wrap:wrap}.strap .actions button{flex:1 1 auto;min-height:40px}
    dialog{background:#161b22;color:#f0f3f6;border:1px solid #30363d;border-radius:12px;width:min(92vw,460px);padding:1rem}
    dialog::backdrop{background:rgba(0,0,0,.6)}
    dialog .row{margin-top:.6rem}dialog .or{color:#8b949e;text-align:center;margin:.5rem 0}
    #message{min-height:1.4em;color:#ff7b72;margin:.2rem 0 .6rem}
    #message.ok{color:#56d364}
    .summary-title{font-size:1rem;margin:.2rem 0 .6rem}
    .summary-cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:.6rem}
    .summary-member{border:1px solid #30363d;border-radius:8px;padding:.5rem .6rem;background:#0d1117;display:flex;flex-direction:column;gap:.3rem;font-variant-numeric:tabular-nums}
    .sm-name{font-weight:bold;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.sm-pts{color:#c9d1d9}
    .sm-curve{height:70px}.sm-curve svg{width:100%;height:100%;display:block}
    .sm-zones{display:grid;grid-template-columns:repeat(5,minmax(0,1fr));gap:.2rem;font-size:.8rem;text-align:center}.sm-zones i{display:block;font-style:normal;opacity:.8}
    .sm-zones .z1{color:#5fd3df}.sm-zones .z2{color:#6ea8ff}.sm-zones .z3{color:#4cc46a}.sm-zones .z4{color:#f5a524}.sm-zones .z5{color:#ff5c5c}
    .sm-sent{font-size:.8rem;color:#f5a524}.sm-sent[data-delivery=delivered]{color:#56d364}.sm-sent[data-delivery=rejected]{color:#ff7b72}
    #signin{max-width:360px;margin:15vh auto;padding:1.2rem}
    #signin form{display:flex;flex-direction:column;gap:.8rem}
    """

    static func signIn(message: String?) -> String {
        var b = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        b += "<title>Coach: sign in</title><style>\(style)</style></head><body><section id=\"signin\"><h2>Coach sign-in</h2>"
        if let message { b += "<p id=\"message\" role=\"alert\" data-testid=\"coach-message\">\(escape(message))</p>" }
        b += "<form method=\"post\" action=\"/coach/signin\"><label>PIN <input data-testid=\"coach-pin\" name=\"pin\" type=\"password\" "
        b += "inputmode=\"numeric\" autocomplete=\"current-password\" required autofocus></label>"
        b += "<button type=\"submit\" data-testid=\"coach-signin\">Sign in</button></form></section></body></html>"
        return b
    }

    static func page(csrf: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="csrf" content="\(csrf)"><title>Coach</title><style>\(style)</style></head><body>
        <header><h1 id="room">Coach</h1><button class="quiet" id="signout" data-testid="coach-signout">Sign out</button></header>
        <main>
        <div id="message" role="status" data-testid="coach-message"></div>
        <section id="class"><h2>Class</h2>
          <div id="class-form" class="row">
            <label>Name <input data-testid="class-name" id="class-name" maxlength="80" placeholder="Spin 18:00"></label>
            <label>Type <select data-testid="class-type" id="class-type"></select></label>
            <label>Planned length (min) <input data-testid="class-length" id="class-length" type="number" min="1" max="600" value="45" inputmode="numeric"></label>
            <button data-testid="class-start" id="class-start">Start class</button>
          </div>
          <div id="class-running" class="hidden">
            <div><div id="running-name"></div><div id="class-timer" data-testid="class-timer">0:00</div></div>
            <button class="stop" data-testid="class-stop" id="class-stop">Stop class</button>
          </div>
        </section>
        <section><h2>Straps in the room <span id="strap-count"></span></h2><div id="members-problem" class="why"></div><div id="straps"></div></section>
        <section id="last"><h2>Last class</h2><div id="summary-box"><p>No class has ended yet.</p></div></section>
        </main>
        <dialog id="assign-dialog"><h2 id="assign-title">Assign strap</h2>
          <div class="row"><label>Member <select data-testid="member-pick" id="member-pick"></select></label></div>
          <div class="or">or</div>
          <div class="row"><label>Pairing code <input data-testid="pair-code" id="pair-code" autocomplete="off" autocapitalize="characters"></label></div>
          <div class="row"><button class="quiet" id="assign-cancel">Cancel</button><button data-testid="member-save" id="member-save">Assign</button></div>
        </dialog>
        <dialog id="profile-dialog"><h2 id="profile-title">Profile</h2>
          <div class="row"><label>Age <input data-testid="profile-age" id="profile-age" type="number" min="5" max="120" inputmode="numeric"></label>
          <label>Max heart rate <input data-testid="profile-max-hr" id="profile-max-hr" type="number" min="100" max="240" inputmode="numeric"></label>
          <label>Weight (kg) <input data-testid="profile-weight" id="profile-weight" type="number" min="20" max="350" step="0.1" inputmode="decimal"></label></div>
          <div class="row"><button class="quiet" id="profile-cancel">Cancel</button><button data-testid="profile-save" id="profile-save">Save profile</button></div>
        </dialog>
        <script>\(script)</script></body></html>
        """
    }

    static let script = #"""
    "use strict";
    const csrf = document.querySelector('meta[name=csrf]').content;
    const $ = (id) => document.getElementById(id);
    let state = null, timer = null, summaryNumber = -1, assignFor = null, profileFor = null;
    const rows = new Map();

    function say(text, ok) { const m = $("message"); m.textContent = text || ""; m.classList.toggle("ok", !!ok); }
    function set(node, text) { if (node.textContent !== text) node.textContent = text; }
    function clock(s) {
      s = Math.max(0, Math.floor(s)); const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), ss = String(s % 60).padStart(2, "0");
      return h ? h + ":" + String(m).padStart(2, "0") + ":" + ss : m + ":" + ss;
    }

    async function post(path, body) {
      const r = await fetch(path, {method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}, body: JSON.stringify(body || {})});
      if (r.status === 401) { location.reload(); return null; }
      const answer = await r.json().catch(() => ({}));
      if (!r.ok) { say(answer.error || ("refused (" + r.status + ")")); return null; }
      return answer;
    }

    function el(tag, cls, parent, text) {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      if (parent) parent.appendChild(e);
      return e;
    }

    function stateText(s) {
      return {"streaming": "streaming", "advertised": "heard by advertisement (no link)", "waiting-for-link": "waiting for a link",
              "waiting": "waiting", "connecting": "connecting", "resolving": "connecting", "backing-off": "retrying the link"}[s] || s;
    }

    function row(strap) {
      let r = rows.get(strap.address);
      if (!r) {
        const root = el("div", "strap");
        root.dataset.testid = "strap-row";
        root.setAttribute("data-testid", "strap-row");
        root.dataset.address = strap.address;
        const top = el("div", "top", root);
        const who = el("span", "who", top);
        const hr = el("span", "hr", top);
        const st = el("div", "state", root);
        const why = el("div", "why", root);
        const addr = el("div", "addr", root, strap.address);
        const actions = el("div", "actions", root);
        const assign = el("button", "", actions, "Assign");
        assign.setAttribute("data-testid", "strap-assign");
        assign.onclick = () => openAssign(strap.address);
        const profile = el("button", "quiet", actions, "Profile");
        profile.setAttribute("data-testid", "strap-profile");
        profile.onclick = () => openProfile(strap.address);
        const unassign = el("button", "quiet", actions, "Unassign");
        unassign.setAttribute("data-testid", "strap-unassign");
        unassign.onclick = async () => {
          if (await post("/coach/api/straps/unassign", {address: strap.address})) { say("Unassigned " + strap.address, true); refresh(); }
        };
        r = {root, who, hr, st, why, addr, assign, profile, unassign};
        rows.set(strap.address, r);
      }
      r.root.dataset.state = strap.state;
      set(r.who, strap.member ? strap.member.name : strap.name);
      set(r.hr, strap.hr ? strap.hr + " bpm" : "");
      set(r.st, stateText(strap.state) + (strap.battery !== undefined && strap.battery !== null ? " · battery " + strap.battery + "%" : ""));
      set(r.why, strap.reason || "");
      r.assign.classList.toggle("hidden", !!strap.member);
      r.profile.classList.toggle("hidden", !strap.member);
      r.unassign.classList.toggle("hidden", !strap.member);
      return r.root;
    }

    function draw(s) {
      state = s;
      set($("room"), "Coach · " + s.room);
      document.title = "Coach · " + s.room;
      const types = $("class-type");
      if (types.options.length !== s.class_types.length) {
        types.textContent = "";
        for (const t of s.class_types) { const o = el("option", "", types, t); o.value = t; }
      }
      $("class-form").classList.toggle("hidden", !!s.running);
      $("class-running").classList.toggle("hidden", !s.running);
      timer = s.running ? {elapsed: s.running.elapsed, length: s.running.length, at: Date.now()} : null;
      set($("running-name"), s.running ? s.running.name + " (" + s.running.type + ")" : "");
      tick();
      const list = $("straps");
      const seen = new Set();
      const order = {"streaming": 0, "advertised": 1};
      const sorted = s.straps.slice().sort((a, b) => ((order[a.state] ?? 2) - (order[b.state] ?? 2)) || a.address.localeCompare(b.address));
      sorted.forEach((strap, i) => {
        seen.add(strap.address);
        const node = row(strap);
        if (list.children[i] !== node) list.insertBefore(node, list.children[i] || null);
      });
      for (const [address, r] of rows) if (!seen.has(address)) { r.root.remove(); rows.delete(address); }
      set($("strap-count"), "(" + s.straps.length + ")");
      set($("members-problem"), s.members_problem || "");
      if (s.summary_number !== summaryNumber) { summaryNumber = s.summary_number; loadSummary(); }
    }

    let summaries = 0;
    async function loadSummary() {
      const r = await fetch("/coach/api/summary", {credentials: "same-origin", cache: "no-store"});
      if (!r.ok) return;
      $("summary-box").innerHTML = await r.text();
      // A class that just ended: its summary is what the coach wants to see.
      if (summaries++ > 0) $("last").scrollIntoView({behavior: "smooth"});
    }

    function tick() {
      if (!timer) { set($("class-timer"), "0:00"); return; }
      const e = timer.elapsed + (Date.now() - timer.at) / 1000;
      set($("class-timer"), clock(e) + (timer.length ? " / " + clock(timer.length) : ""));
    }

    async function refresh() {
      try {
        const r = await fetch("/coach/api/state", {credentials: "same-origin", cache: "no-store"});
        if (r.status === 401) { location.reload(); return; }
        if (r.ok) draw(await r.json());
      } catch (e) { say("Lost the gateway: retrying…"); }
    }

    function openAssign(address) {
      assignFor = address;
      const strap = state.straps.find(s => s.address === address);
      set($("assign-title"), "Assign " + (strap ? strap.name : address));
      const pick = $("member-pick");
      pick.textContent = "";
      const none = el("option", "", pick, state.members.length ? "Choose a member…" : "No members: enter a pairing code");
      none.value = "";
      for (const m of state.members) { const o = el("option", "", pick, m.name); o.value = m.client_id; }
      $("pair-code").value = "";
      $("assign-dialog").showModal();
    }

    function openProfile(address) {
      const strap = state.straps.find(s => s.address === address);
      if (!strap || !strap.member) return;
      profileFor = strap.member.client_id;
      set($("profile-title"), "Profile of " + strap.member.name);
      $("profile-age").value = strap.member.age ?? "";
      $("profile-max-hr").value = strap.member.max_hr ?? "";
      $("profile-weight").value = strap.member.weight_kg ?? "";
      $("profile-dialog").showModal();
    }

    function number(id) { const v = $(id).value.trim(); return v === "" ? null : Number(v); }

    $("class-start").onclick = async () => {
      const name = $("class-name").value.trim();
      if (!name) { say("Give the class a name"); return; }
      const minutes = number("class-length");
      if (await post("/coach/api/class/start", {name, type: $("class-type").value, minutes})) { say("Class started", true); refresh(); }
    };
    $("class-stop").onclick = async () => {
      if (await post("/coach/api/class/stop", {})) { say("Class stopped: the summary follows", true); refresh(); }
    };
    $("assign-cancel").onclick = () => $("assign-dialog").close();
    $("profile-cancel").onclick = () => $("profile-dialog").close();
    $("member-save").onclick = async () => {
      const code = $("pair-code").value.trim(), client_id = $("member-pick").value;
      if (!code && !client_id) { say("Pick a member or enter their pairing code"); return; }
      const body = code ? {address: assignFor, code} : {address: assignFor, client_id};
      if (await post("/coach/api/straps/assign", body)) { $("assign-dialog").close(); say("Assigned", true); refresh(); }
    };
    $("profile-save").onclick = async () => {
      const body = {client_id: profileFor, age: number("profile-age"), max_hr: number("profile-max-hr"), weight_kg: number("profile-weight")};
      if (await post("/coach/api/members/profile", body)) { $("profile-dialog").close(); say("Profile saved", true); refresh(); }
    };
    $("signout").onclick = async () => {
      await fetch("/coach/signout", {method: "POST", credentials: "same-origin", headers: {"X-CSRF-Token": csrf}});
      location.reload();
    };
    setInterval(refresh, 2000);
    setInterval(tick, 1000);
    refresh();
    """#

    static func escape(_ s: String) -> String { PrintableText.html(s) }
}
