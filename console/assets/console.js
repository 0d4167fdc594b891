// The live figures: each element with data-live="<event>" takes the HTML of that server-sent
// event (/live) when it arrives. The browser reconnects by itself after a broken stream.
(function () {
  var targets = document.querySelectorAll("[data-live]");
  if (!targets.length || !window.EventSource) return;
  var source = new EventSource("/live");
  targets.forEach(function (el) {
    source.addEventListener(el.getAttribute("data-live"), function (e) {
      el.innerHTML = e.data;
      if (window.htmx) window.htmx.process(el);
    });
  });
})();
