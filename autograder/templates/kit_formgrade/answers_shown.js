// The answers this page shows go with each save of a grade; a save the server flagged because `make grade` has
// since graded another answer is said on the page (autograder/nbgrader_glue/formgrader_saves.py). Set before it:
// kit_answers_shown, the autograded notebook's answer checksums.
$.ajaxPrefilter(function (options, original, xhr) {
  if (options.type === "PUT" && options.url.indexOf(base_url + "/api/grade/") === 0) {
    xhr.setRequestHeader("X-Kit-Answers-Shown", JSON.stringify(kit_answers_shown));
  }
});
$(document).ajaxComplete(function (event, xhr) {
  if (xhr.getResponseHeader("X-Kit-Answer-Changed") === "1") {
    $("#kit-answer-changed").text("make grade has graded a newer submission since this page was opened: your " +
      "score was saved and flagged for review. Reload the page to see the answer now graded.").prop("hidden", false);
  }
});
