// tracereplay ui: small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  var all = document.getElementById("select-all");
  if (all) {
    all.addEventListener("change", function () {
      document.querySelectorAll('#runs-table input[name="run"]').forEach(function (box) {
        box.checked = all.checked;
      });
    });
  }
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
  var sql = document.getElementById("sql");
  if (sql) {
    sql.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        sql.form.submit();
      }
    });
  }
  // the promote form: choosing an existing suite clears the new-suite name and back
  var suite = document.getElementById("suite"), fresh = document.getElementById("suite_new");
  if (suite && fresh) {
    suite.addEventListener("change", function () { if (suite.value) fresh.value = ""; });
    fresh.addEventListener("input", function () { if (fresh.value) suite.value = ""; });
  }
})();
