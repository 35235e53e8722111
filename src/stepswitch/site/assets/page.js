/* The replay page's script: opens a task (#b<board>/t<task>) by parsing its JSON block and
   drawing each contestant's steps side by side. Text from records goes in by textContent only. */
(function () {
  "use strict";
  var parsed = {};

  function block(id) {
    if (!(id in parsed)) {
      var node = document.getElementById(id);
      parsed[id] = node ? JSON.parse(node.textContent) : null;
    }
    return parsed[id];
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }

  function spaced(parent, items) {  // spaces between the parts: copied text reads as a line
    items.forEach(function (item, i) { add(parent, i ? " " : null, item); });
    return parent;
  }

  function badges(parent, labels) {
    (labels || []).forEach(function (label) {
      add(parent, " ", el("span", "badge b-" + label, label));
    });
  }

  function pre(text) {
    return text ? el("pre", null, text) : null;
  }

  function fact(parent, name, value) {
    if (value === undefined || value === null || value === "") return;
    add(parent, el("b", null, name + " "), String(value), "  ");
  }

  function toolOutcome(t) {
    if (t.exit_code !== null && t.exit_code !== undefined) return t.name + " exit " + t.exit_code;
    return t.name + (t.ok ? "" : t.refused ? " refused" : " failed");
  }

  function modelStep(e, builtIn) {
    var item = el("li", "step");
    var details = el("details");
    var summary = el("summary");
    var outcome = el("span", "out");
    if (e.review) add(outcome, "verdict " + e.review.verdict);
    else if (e.error || e.model_output_failure) add(outcome, el("span", "refused", e.error || e.model_output_failure));
    else if (e.tool_calls.length) {
      e.tool_calls.forEach(function (t, i) {
        add(outcome, i ? ", " : null, t.refused ? el("span", "refused", toolOutcome(t)) : toolOutcome(t));
      });
    } else add(outcome, e.note);
    spaced(summary, [el("span", "step-n", e.step), el("span", "st", e.step_type), el("span", "wk", e.worker),
      el("span", "md", e.model.split("/").pop()), el("span", "tk", e.tokens_text),
      el("span", "usd", e.cost_text), outcome]);
    // A built-in contestant's steps go through the scripted preset but replay no script.
    if (e.scripted) add(summary, " ", builtIn ? el("span", "badge b-built-in", "built-in") : el("span", "badge b-scripted", "scripted"));
    if (e.served_other_model) add(summary, " ", el("span", "badge", "served " + e.served_model));
    if (e.fallback_from) add(summary, " ", el("span", "badge b-fallback", "fallback from " + e.fallback_from));
    var body = el("div", "detail");
    var facts = el("p", "facts");
    fact(facts, "provider", e.provider);
    fact(facts, "model", e.model);
    fact(facts, "served", e.served_model);
    fact(facts, "effort", e.effort);
    fact(facts, "escalation level", e.escalation);
    fact(facts, "reasoning tokens", e.reasoning_tokens || null);
    fact(facts, "cache writes", e.cache_write_tokens || null);
    fact(facts, "attempts", e.attempts);
    fact(facts, "finish", e.finish_reason);
    fact(facts, "time", e.duration_s.toFixed(2) + " s");
    fact(facts, "request", e.request_id);
    fact(facts, "as if served by", e.as_if_text);
    add(body, facts);
    if (e.fallback_from) add(body, el("p", "problem", "fallback: " + e.fallback_reason));
    if (e.error) add(body, el("p", "problem", "error: " + e.error));
    if (e.model_output_failure) add(body, el("p", "problem", "model output failure: " + e.model_output_failure));
    if (e.text) add(body, el("div", null, "answer:"), pre(e.text));
    e.tool_calls.forEach(function (t) {
      var tool = el("div", "tool");
      add(tool, el("b", null, toolOutcome(t)), t.refused ? el("span", "refused", " (refused)") : null);
      add(tool, pre(t.arguments), t.output ? el("div", null, "output:") : null, pre(t.output));
      add(body, tool);
    });
    if (e.review) add(body, el("p", null, "verdict " + e.review.verdict + ": " + e.review.reasons));
    if (e.note) add(body, el("p", "facts", e.note));
    add(details, summary, body);
    return add(item, details);
  }

  function gates(e) {
    var item = el("li", "gates");
    var details = el("details");
    if (!e.passed) details.open = true;
    var names = e.gates.map(function (g) { return g.name; }).join(", ") || "none";
    add(details, spaced(el("summary"), [el("span", "step-n", ""), el("span", "st", "gates"),
      el("span", e.passed ? "gate-pass" : "gate-fail", e.note), names]));
    var body = el("div", "detail");
    e.gates.forEach(function (g) {
      add(body, add(el("div"), el("span", g.passed ? "gate-pass" : "gate-fail", g.passed ? "passed " : "failed "),
        g.name + " (" + g.duration_s.toFixed(1) + " s)"), pre(g.report));
    });
    var first = e.timings && e.timings.first_verdict_s;
    if (typeof first === "number") add(body, el("p", "facts", "first test verdict " + first.toFixed(1) + " s"));
    return add(item, add(details, body));
  }

  function review(e) {
    var r = e.review;
    var item = el("li", "review");
    var details = el("details");
    var line = "reviewer " + r.verdict;
    if (r.second_opinion) line += ", second opinion " + r.second_opinion + (r.agree === false ? " (they disagree)" : r.agree ? " (they agree)" : "");
    add(details, spaced(el("summary"), [el("span", "step-n", ""), el("span", "st", "review"), line]));
    var body = el("div", "detail");
    add(body, el("div", null, "reviewer (" + r.verdict + "):"), pre(r.reasons));
    if (r.second_opinion) add(body, el("div", null, "second opinion (" + r.second_opinion + "):"), pre(r.second_reasons));
    return add(item, add(details, body));
  }

  function event(e, builtIn) {
    if (e.kind === "model_step") return modelStep(e, builtIn);
    if (e.kind === "gates") return gates(e);
    if (e.kind === "review") return review(e);
    if (e.kind === "escalation") {
      return add(el("li", "esc"), el("span", "step-n", "^"),
        "escalation " + e.to_level + ": " + e.reason + "; " + e.to_worker + " takes the task over");
    }
    if (e.kind === "finish") {
      return add(el("li", "fin"), el("span", "step-n", ""), "finish: " + e.outcome + " — " + e.reason +
        " (exit " + e.exit_code + (e.commit ? ", commit " + e.commit.slice(0, 12) : "") + ")");
    }
    return el("li", null, e.kind);
  }

  function runColumn(contestant, runs, board) {
    var col = el("div", "col");
    col.setAttribute("data-contestant", contestant);
    var title = add(el("h4"), contestant);
    var all = {};
    runs.forEach(function (r) { (r.labels || []).forEach(function (l) { all[l] = 1; }); });
    badges(title, Object.keys(all));
    add(col, title);
    if (!runs.length) return add(col, el("p", "note", "no run of this task"));
    var holder = el("div");
    function show(i) {
      holder.replaceChildren(runView(runs[i]));
      Array.prototype.forEach.call(col.querySelectorAll(".attempts button"), function (b, j) {
        b.setAttribute("aria-pressed", String(i === j));
      });
    }
    if (runs.length > 1) {
      var bar = el("p", "attempts");
      runs.forEach(function (r, i) {
        var b = el("button", null, "attempt " + r.attempt);
        b.type = "button";
        b.addEventListener("click", function () { show(i); });
        add(bar, b);
      });
      add(col, bar);
    }
    add(col, holder);
    show(0);
    return col;
  }

  function runView(r) {
    var box = el("div", "run");
    if (r.problem) {
      add(box, el("p", "outcome o-problem", "no record"), el("p", "problem", r.problem));
      if (r.grade) add(box, el("p", "facts", "hidden tests: " + r.grade));
      return box;
    }
    var head = add(el("p"), el("span", "outcome o-" + r.outcome, r.outcome), " — " + r.reason);
    badges(head, r.labels);
    var facts = el("p", "facts");
    fact(facts, "bill", r.bill);
    fact(facts, "tokens", r.tokens);
    fact(facts, "steps", r.steps);
    fact(facts, "gates", r.gates_verdict);
    fact(facts, "review", r.review_verdict);
    fact(facts, "hidden tests", r.grade);
    var more = el("p", "facts");
    fact(more, "run", r.run_id);
    fact(more, "policy", r.policy);
    fact(more, "branch", r.branch);
    fact(more, "commit", r.commit ? r.commit.slice(0, 12) : null);
    fact(more, "started", r.started_at);
    fact(more, "elapsed", r.elapsed_s === null ? null : r.elapsed_s.toFixed(1) + " s");
    var workers = el("p", "facts");
    Object.keys(r.workers).forEach(function (name) {
      fact(workers, name + ":", r.workers[name] + (r.by_worker[name] ? " (" + r.by_worker[name] + ")" : ""));
    });
    var list = el("ol", "events");
    var builtIn = (r.labels || []).indexOf("built-in") >= 0;
    r.events.forEach(function (e) { add(list, event(e, builtIn)); });
    // A scripted run of the demo's workers: its bill as if the ladder had served it (view.as_if).
    var asIf = r.as_if && r.as_if.length ? el("pre", "as-if", r.as_if.join("\n")) : null;
    add(box, head, facts, more, workers, asIf, list);
    if (r.changed_files.length) {
      add(box, el("p", "facts", "changed: " + r.changed_files.map(function (f) {
        return f.path + (f.added === null ? "" : " +" + f.added + " -" + f.deleted);
      }).join(", ")));
    }
    return box;
  }

  function openTask(view, d) {
    var name = d.task.split("\n")[0];
    var h = add(el("h3"), "Task: " + (name.length > 100 ? name.slice(0, 99) + "…" : name) + "  ");
    var back = el("a", null, "back to the tasks");
    back.href = "#" + d.board + "-t" + d.index;
    add(h, back);
    var cols = el("div", "cols");
    d.contestants.forEach(function (c) { add(cols, runColumn(c, d.runs[c], d.board)); });
    var text = d.task;  // a bench names its task; the runs say what it asked
    d.contestants.forEach(function (c) {
      d.runs[c].forEach(function (r) { if (r.task_text && text === d.task) text = r.task_text; });
    });
    view.replaceChildren(h, el("p", "task-text", text), cols);
  }

  function route() {
    var m = /^#(b\d+)\/t(\d+)$/.exec(location.hash);
    Array.prototype.forEach.call(document.querySelectorAll(".task-view"), function (v) {
      v.hidden = true;
      v.replaceChildren();
    });
    if (!m) return;
    var d = block("d-" + m[1] + "-t" + m[2]);
    var view = document.getElementById(m[1] + "-view");
    if (!d || !view) return;
    openTask(view, d);
    view.hidden = false;
    view.scrollIntoView();
  }

  window.addEventListener("hashchange", route);
  route();
  var every = Number(document.body.getAttribute("data-refresh"));
  if (every > 0) setTimeout(function () { location.reload(); }, every * 1000);
})();
