// What every page that follows a server-sent-events stream does with it.

// Leaving the page closes its stream at once: a page the browser keeps
// for "back" would otherwise hold one of its few connections to this host
// (six over HTTP/1.1), and enough of them stall every other page. Coming
// back to such a page reloads it, stream and all.
export function closeOnLeaving(source) {
  window.addEventListener("pagehide", () => source.close());
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) window.location.reload();
  });
}
