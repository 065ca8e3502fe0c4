"""Gradescope: the autograder zip (build, `make gradescope`) and grading one submission inside it (run).

Gradescope's autograder specification (gradescope-autograders.readthedocs.io, "Specifications"): a zip
with `setup.sh` and `run_autograder` at its root, unpacked into /autograder/source; Gradescope runs
`setup.sh` once when it builds the image and `run_autograder` (as root, working directory /autograder)
for each submission, with the student's files in /autograder/submission; `run_autograder` must write
/autograder/results/results.json.

    build   the zip: the two scripts, the grader as a course directory, the pinned requirements and the
            reference's answers as data (`python -m autograder gradescope-zip`, on the instructor's machine)
    run     inside the image: the shipped answers checked once (`python -m autograder gradescope-prepare`,
            from setup.sh) and each submission graded into results.json (`python -m autograder
            gradescope-run`, from run_autograder)
"""
