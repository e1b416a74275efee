// Live updates for Arena's pages. The page's <main data-live="URL"> names a
// server-sent-events stream; each "snapshot" event carries
// {"items": [{"attr": "match", "key": "ID", "fields": {"state": "done"}}]}
// and every field's text goes into the [data-field] element inside the
// element with data-ATTR="KEY". The page works without this script; it
// only spares a reload.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  if (!main || !window.EventSource) {
    return;
  }
  var noticeShown = false;

  function quote(value) {
    return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
  }

  // Something new (a round scheduled, a tournament created) has no element
  // yet: offer a reload rather than build rows here.
  function showReloadNotice() {
    if (noticeShown) {
      return;
    }
    noticeShown = true;
    var notice = document.createElement("p");
    notice.className = "notice";
    var link = document.createElement("a");
    link.href = window.location.href;
    link.textContent = "Something new was scheduled: reload to see it.";
    notice.appendChild(link);
    main.insertBefore(notice, main.firstChild);
  }

  function apply(snapshot) {
    var missing = false;
    (snapshot.items || []).forEach(function (item) {
      var element = document.querySelector("[data-" + item.attr + '="' + quote(item.key) + '"]');
      if (!element) {
        missing = true;
        return;
      }
      Object.keys(item.fields).forEach(function (field) {
        var cell = element.querySelector('[data-field="' + quote(field) + '"]');
        var text = item.fields[field];
        if (cell && cell.textContent !== text) {
          cell.textContent = text;
          cell.classList.remove("changed");
          // Restart the highlight on every change.
          void cell.offsetWidth;
          cell.classList.add("changed");
        }
      });
    });
    if (missing) {
      showReloadNotice();
    }
  }

  var source = new EventSource(main.getAttribute("data-live"));
  source.addEventListener("snapshot", function (event) {
    try {
      apply(JSON.parse(event.data));
    } catch (e) {
      // A snapshot that does not parse is skipped; the next one replaces it.
    }
  });
})();
