(function () {
  "use strict";
  var table = document.getElementById("matrix");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var cells = Array.prototype.slice.call(table.querySelectorAll("[data-b]"));
  var search = document.getElementById("search");
  var dtype = document.getElementById("dtype");
  var count = document.getElementById("count");
  var columnsNote = document.getElementById("columns");
  var empty = document.getElementById("empty");
  var detail = document.getElementById("detail");
  var detailBody = document.getElementById("detail-body");
  var controls = document.getElementById("controls");

  function boxes(name) {
    return Array.prototype.slice.call(controls.querySelectorAll('input[name="' + name + '"]'));
  }

  function checked(name) {
    var out = {};
    boxes(name).forEach(function (b) { if (b.checked) out[b.value] = true; });
    return out;
  }

  // Show the rows that match the search, the kinds and, in a shown backend, the dtype.
  function apply() {
    var terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var backends = checked("backend");
    var kinds = checked("kind");
    var want = dtype.value;
    var shown = 0;
    var filled = {};  // the chosen backends with a cell in a shown row
    rows.forEach(function (row) {
      var text = row.dataset.search;
      var ok = kinds[row.dataset.kind] === true && terms.every(function (t) { return text.indexOf(t) >= 0; });
      if (ok) {
        ok = Array.prototype.some.call(row.cells, function (c) {
          return c.dataset.b && backends[c.dataset.b] && c.dataset.dtypes !== undefined &&
            (!want || c.dataset.dtypes.split(" ").indexOf(want) >= 0);
        });
      }
      row.hidden = !ok;
      if (!ok) return;
      shown += 1;
      Array.prototype.forEach.call(row.cells, function (c) {
        if (c.dataset.b && backends[c.dataset.b] && c.dataset.dtypes !== undefined) filled[c.dataset.b] = true;
      });
    });
    // A chosen backend none of the shown patterns has loses its column, so that what a search
    // finds in the last columns is on screen, not past empty ones.
    var chosen = Object.keys(backends).length;
    var visible = shown > 0 ? filled : backends;
    var columns = Object.keys(visible).length;
    cells.forEach(function (c) { c.hidden = !visible[c.dataset.b]; });
    // A few backends side by side get room for a dtype config per line.
    table.style.setProperty("--column", columns <= 3 ? "340px" : columns <= 5 ? "230px" : columns <= 7 ? "180px" : "150px");
    count.textContent = shown + " of " + rows.length + " patterns";
    columnsNote.hidden = columns === chosen;
    columnsNote.textContent = columns === chosen ? "" :
      "(" + (chosen - columns) + " of " + chosen + " backends hidden: none of these patterns)";
    empty.hidden = shown > 0;
  }

  function select(id) {
    var template = id ? document.getElementById("d-" + id) : null;
    rows.forEach(function (r) { r.classList.toggle("selected", r.id === id && template !== null); });
    if (template === null) {
      detail.hidden = true;
      detailBody.replaceChildren();
      return;
    }
    detailBody.replaceChildren(template.content.cloneNode(true));
    detail.hidden = false;
  }

  function fromHash() {
    select(decodeURIComponent(location.hash.slice(1)));
  }

  controls.addEventListener("submit", function (e) { e.preventDefault(); });
  controls.addEventListener("input", apply);
  controls.addEventListener("change", apply);
  controls.addEventListener("click", function (e) {
    var t = e.target;
    var name = t.dataset && (t.dataset.all || t.dataset.none);
    if (!name) return;
    boxes(name).forEach(function (b) { b.checked = Boolean(t.dataset.all); });
    apply();
  });
  document.getElementById("close").addEventListener("click", function () {
    history.replaceState(null, "", location.pathname + location.search);
    select("");
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && !detail.hidden) {
      history.replaceState(null, "", location.pathname + location.search);
      select("");
    } else if (e.key === "/" && document.activeElement !== search) {
      e.preventDefault();
      search.focus();
    }
  });
  window.addEventListener("hashchange", fromHash);
  apply();
  fromHash();
})();
