"""The site address every page path is scoped by (``cmssync.content.trees``): which locale tree a path is in, what
is inferred and what is not."""

from __future__ import annotations

from cmssync.content.trees import Address, Tree, Trees

TWO = Trees("default", (Tree("en_US", "/", 1, default=True), Tree("de_DE", "/de", 260)))
THREE = Trees("default", (*TWO.trees, Tree("fr_FR", "/fr", 300)))


def test_a_path_is_in_the_tree_whose_home_holds_it() -> None:
    assert TWO.address("/about") == Address("default", "en_US")
    assert TWO.address("/de") == Address("default", "de_DE")
    assert TWO.address("/de/about/team") == Address("default", "de_DE")
    assert TWO.address("/dev") == Address("default", "en_US")  # /dev is no page of the /de tree
    assert TWO.roots(1) == {"/": 1, "/de": 260}
    assert TWO.is_home("/de")
    assert not TWO.is_home("/de/about")


def test_a_single_locale_site_has_one_tree_and_names_none() -> None:
    one = Trees("default", (Tree("en_US", "/", 1, default=True),))
    assert not one.multiple
    assert Trees().roots(7) == {"/": 7}  # a site never read: its home alone
    assert Trees.of_homes(one.homes).address("/about") == Address("default", "en_US")


def test_a_localized_stack_is_named_only_when_one_tree_can_hold_it() -> None:
    assert TWO.address("/!stacks/footer/footer") == Address("default", "de_DE")  # the one tree besides the default
    assert THREE.address("/!stacks/footer/footer") == Address("default", "")  # the API does not say which
    assert TWO.address("/!stacks/footer") == Address("default", "")  # a neutral stack is every tree's


def test_translations_are_the_same_place_in_each_other_tree() -> None:
    assert THREE.translations("/de/about") == {"en_US": "/about", "fr_FR": "/fr/about"}
    assert THREE.translations("/") == {"de_DE": "/de", "fr_FR": "/fr"}
    assert THREE.translations("/!stacks/footer") == {}
