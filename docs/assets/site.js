// bcfg's site: open the error example a link points at (the reference shows them collapsed).
(function () {
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var anchor = id && document.getElementById(id);
    var holder = anchor && anchor.parentElement;
    var details = holder && holder.nextElementSibling;
    if (id.indexOf("error-") === 0 && details && details.tagName === "DETAILS") {
      details.open = true;
      anchor.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  window.addEventListener("load", openTarget);
})();
