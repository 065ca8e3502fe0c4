// nbgrader draws controls that a screen reader cannot name: links in its tables that hold only an icon (a pencil,
// a flash, an envelope), named here by their column's heading and their row's first cell ("Edit dl01_6_3");
// fields in its dialogs, laid out as a table, named by their row's first cell ("Due date (optional)"); and the
// dialogs themselves, named by their title.
function kitNameControls() {
  document.querySelectorAll("td a:not([aria-label]), td button:not([aria-label])").forEach(function (link) {
    var cell = link.closest("td"), table = link.closest("table");
    if (link.textContent.trim() || !table.tHead || !table.tHead.rows.length) return;
    var heading = table.tHead.rows[0].cells[cell.cellIndex], first = cell.parentElement.cells[0];
    var name = [heading ? heading.textContent : "", first !== cell ? first.textContent : ""].join(" ");
    link.setAttribute("aria-label", name.replace(/\s+/g, " ").trim());
  });
  document.querySelectorAll(".modal td input:not([aria-label]), .modal td select:not([aria-label]), "
                            + ".modal td textarea:not([aria-label])").forEach(function (field) {
    var first = field.closest("tr").cells[0];
    if (first && !first.contains(field) && !field.labels.length) {
      field.setAttribute("aria-label", first.textContent.replace(/\s+/g, " ").trim());
    }
  });
  document.querySelectorAll(".modal:not([aria-label])").forEach(function (dialog) {
    var title = dialog.querySelector(".modal-title");
    if (title) dialog.setAttribute("aria-label", title.textContent.trim());
  });
}
new MutationObserver(kitNameControls).observe(document.documentElement, {childList: true, subtree: true});
