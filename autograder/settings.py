"""The grader's options, as traitlets settings so nbgrader_config.py is their one home."""
from __future__ import annotations

import os
from pathlib import Path

from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Config, Configurable, PyFileConfigLoader

from .sandbox import ISOLATION, Budget, Limits


class GraderSettings(Configurable):
    """Limits for student code and how the grader runs it. Set them as c.GraderSettings.<name>."""

    seconds = Float(3.0, help="CPU seconds one check (and each cell of loading the notebook) may use; twice as "
                              "long of wall-clock time, less waits for a CPU, is the backstop.").tag(config=True)
    memory_mb = Int(1024, help="Memory (MB of address space) student code may add for one check.").tag(config=True)
    output_kb = Int(1024, help="What student code may print in one check (KB) before it is stopped.").tag(config=True)
    answer_kb = Int(1024, help="The largest answer (KB of JSON) one check may send the grader, holding at most one "
                               "value per 16 bytes of that and nested at most 32 deep; a larger one is that check's "
                               "named failure. The probes' largest is about 37 KB.").tag(config=True)
    notebook_kb = Int(2048, help="The largest notebook file (KB) the grader reads; a larger one is not graded, "
                                 "with the reason (its outputs are usually what makes it large).").tag(config=True)
    submission_files = List(Unicode(), [], help="Files beside the notebook that grading takes from a submission "
                            "(glob patterns from its folder, e.g. 'data/*.csv'), and so copies into autograded/ and "
                            "feedback/; none by default: only the notebook and nbgrader's timestamp.txt "
                            "(autograder/intake/files.py).").tag(config=True)
    submission_file_kb = Int(1024, help="The largest file (KB) of submission_files taken; a larger one is named in "
                                        "a note and left out.").tag(config=True)
    submission_files_total_kb = Int(10240, help="The most (KB) one student's submission_files may hold together: "
                                               "each is copied three times (the intake's copy, autograded/, "
                                               "feedback/). Files are taken in the intake's order (shallowest "
                                               "first, by name); one that would pass it is named in a note and "
                                               "left out.").tag(config=True)
    submission_entries = Int(1000, help="Entries (files and folders) of one submission folder the intake looks "
                                        "at; hidden folders such as .git are not entered.").tag(config=True)
    page_seconds = Float(60.0, help="CPU seconds writing one student's feedback page may use (an honest notebook of "
                                    "notebook_kb takes about 1.5 s); past it the page is not written and make grade "
                                    "names the student as not graded, with that reason. Every run writes a missing page "
                                    "again.").tag(config=True)
    autograde_seconds = Float(60.0, help="CPU seconds nbgrader's autograde of one student's notebook may use in its "
                                         "grading process: nbgrader's steps and the grader's side of the checks, not "
                                         "the sandbox's (an honest notebook of notebook_kb takes about 0.5 s, one of "
                                         "adversarial markdown about 4 s); past it the student is not graded, with "
                                         "that reason, and scores 0.").tag(config=True)
    jobs = Int(0, help="Cores to grade on; 0 means all. Grading runs one process more (one may be waiting out "
                       "a time limit); feedback runs one per core.").tag(config=True)
    isolate = Bool(
        os.geteuid() == 0,
        help="Confine each submission (autograder/sandbox/isolation.py): a uid of its worker's own, fresh PID, mount, "
             "network and IPC namespaces, cgroups for its budgets. On by default when the grader runs as root.",
    ).tag(config=True)
    budget_seconds = Float(Budget.seconds, help="CPU seconds one submission's processes, and the grader reading "
                                                "their answers, may use in all (twice as long of wall-clock time, less "
                                                "waits for a CPU, is the backstop); the rest are 'not run'.").tag(config=True)
    budget_answers_mb = Int(Budget.answers_mb, help="What one submission's answers, and the errors its cells raised "
                                                    "while loading, may come to in all (MB of JSON, as the grader "
                                                    "reads them); the checks after are 'not run'. "
                                                    "The probes' answers to a whole notebook come to about 0.2 MB."
                            ).tag(config=True)
    budget_memory_mb = Int(1024, help="Memory (MB) all of one submission's processes may hold together (a cgroup; "
                                      "where there is none, the sandbox sums their PSS each tick of a call)."
                           ).tag(config=True)
    budget_processes = Int(64, help="Processes one submission may have at once.").tag(config=True)
    budget_disk_mb = Int(64, help="Scratch space (MB) of one submission: its private /tmp, /var/tmp and "
                                  "/dev/shm together (without namespaces: its scratch folder).").tag(config=True)
    message_chars = Int(300, help="The longest message one check may show; longer ones are cut.").tag(config=True)
    message_budget = Int(20000, help="Characters of message text one submission's report may carry in all, "
                                     "so that feedback cannot carry bulk data out.").tag(config=True)
    gradescope_hidden_visibility = Enum(
        ["hidden", "after_due_date", "after_published", "visible"], "after_published",
        help="On Gradescope (make gradescope), when a student sees each hidden check's result and one-line message: "
             "Gradescope's test visibility. Each part's score is always visible.",
    ).tag(config=True)

    part_titles = Dict(value_trait=Unicode(), help="What each part (grade id) checks, in words: shown beside the id "
                       "in feedback, the summary, the class page and grades.csv's headers.").tag(config=True)

    canvas_column = Unicode("", help="The assignment's column in `make grades-lms`'s Canvas CSV: its header in a "
                            "gradebook export from Canvas, 'Name (12345)' with Canvas's assignment id, so that the "
                            "import fills that assignment (a header Canvas does not know makes a new assignment). "
                            "Empty: the assignment id.").tag(config=True)

    due_date = Unicode("", help="The assignment's due date, e.g. '2026-12-15 23:59:00 UTC': make grade writes it into "
                       "the gradebook, where nbgrader's late penalty (c.AssignLatePenalties.plugin_class, "
                       "c.LatePenalty.penalty_method) reads it. Empty: the gradebook's own due date, if any "
                       "(nbgrader db assignment add --duedate, or one an earlier make grade wrote; the summary "
                       "names it).").tag(config=True)
    canvas_partial = Bool(False, help="make grades-lms: export the points graded so far for a student whose written "
                          "answers are not all graded. Off: such a row is left blank (and counted), so that an "
                          "early import never turns a partial total into a grade.").tag(config=True)
    canvas_roster = Unicode("", help="make grades-lms: a gradebook export from Canvas (Grades > Export, a CSV, path "
                            "from the course root) whose ID column gives the Canvas user id of a student whose "
                            "id is their SIS Login ID or SIS User ID there. Empty: ids come only from the "
                            "LMS download's names (smithjohn_12345).").tag(config=True)
    canvas_folder_ids = Enum(("SIS Login ID", "SIS User ID", "none"), default_value="SIS Login ID", help="make "
                             "grades-lms: which of Canvas's SIS ids the submitted/ folders you named yourself carry: "
                             "the column a row without a download's number gives its id in, and the only one "
                             "canvas_roster is matched by (an id the roster gives another column, or another "
                             "user, is left out and named); 'none' when the students named them (a GitHub "
                             "Classroom clone's usernames): a row without a download's number is left out and "
                             "named, and canvas_roster is not read.").tag(config=True)

    @validate("due_date")
    def _due_date_fixed(self, proposal: dict) -> str:
        """A due date read the same on every machine and every day, as a submission's time stamp must be
        (intake.validate.FIXED_TIME): dateutil completes "Friday 23:59" from today and reads "JST" through the
        machine's zone, so who is late, and by how much, would depend on when and where the class is graded."""
        from .intake.validate import FIXED_TIME

        value = proposal["value"]
        if value.strip() and not FIXED_TIME.fullmatch(value.strip()):
            raise TraitError(f"c.GraderSettings.due_date = {value!r} is not a whole date and time in UTC "
                             f"('2026-12-15 23:59:00 UTC') or with its offset ('2026-12-15T23:59:00+01:00'): "
                             f"it would read differently by the day or the machine it is graded on")
        return value

    def title(self, grade_id: str) -> str:
        """`grade_id`'s title, or the id itself when it has none."""
        return self.part_titles.get(grade_id, grade_id)

    @property
    def limits(self) -> Limits:
        return Limits(seconds=self.seconds, memory_mb=self.memory_mb, output_kb=self.output_kb,
                      answer_kb=self.answer_kb)

    def budget(self, submissions: int = 1) -> Budget:
        """What one submission may use in all (sandbox.Budget); `submissions` times that for a sandbox that runs
        so many submissions' worth of calls in one session (the reference's, for every part at once)."""
        return Budget(seconds=self.budget_seconds * submissions, answers_mb=self.budget_answers_mb * submissions)

    def isolation(self) -> dict:
        """The sandbox's isolation (see Sandbox), or {} when it is off."""
        if not self.isolate:
            return {}
        budgets = {"memory_mb": self.budget_memory_mb, "processes": self.budget_processes,
                   "disk_mb": self.budget_disk_mb}
        return {"path": str(ISOLATION), "budgets": budgets}


def load_config(root: Path) -> Config:
    """The course's nbgrader_config.py, as a traitlets Config (empty when there is none)."""
    path = root / "nbgrader_config.py"
    if not path.exists():
        return Config()
    return PyFileConfigLoader(path.name, path=str(root)).load_config()
