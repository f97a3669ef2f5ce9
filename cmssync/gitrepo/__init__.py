"""Git for cmssync's proposals: commits on a branch that is not checked out, pushes, and the forges' pull requests.

Git runs as the ``git`` binary through ``subprocess`` (:mod:`cmssync.gitrepo.repo`): no extra dependency (every
machine that has a repository has git), and the plumbing used here (``worktree``, ``add``, ``write-tree``,
``commit-tree``, ``update-ref``, ``push --porcelain``) has been stable for a decade, while the libraries either
wrap the same binary (GitPython) or reimplement a subset of it (dulwich, pygit2 with libgit2's own rules for
hooks, credentials and configuration). A user's git configuration, credentials and remotes therefore work as they
do in a terminal.
"""
