"""Navigation blocks: menus, breadcrumbs, next/previous, page lists, date archives, search, tags, the top bar
(see :mod:`.model`)."""

from __future__ import annotations

from cmssync.emulator.blocktypes.model import Args, BlockType, Where, flag, int_value

_PAGE_LIST_FLAGS = (
    "enableExternalFiltering",
    "includeAllDescendents",
    "includeDate",
    "truncateSummaries",
    "displayFeaturedOnly",
    "displayThumbnail",
    "displayAliases",
    "displaySystemPages",
    "excludeCurrentPage",
)


def _page_list_save(args: Args, where: Where) -> Args:
    """``cThis`` / ``cThisParent`` compare the parent *strictly* with the page's own id and its parent's: a numeric
    parent is an integer, ``""`` matches neither; no parent is stored 0. ``topicFilter`` sets the two topic flags."""
    parent = args.get("cParentID")
    if isinstance(parent, bool):
        parent = int(parent)
    if isinstance(parent, (int, float)) or (isinstance(parent, str) and parent.strip().lstrip("-").isdigit()):
        parent = int_value(parent)
    args["num"] = max(int_value(args.get("num")), 0)
    args["cThis"] = "1" if isinstance(parent, int) and parent == where.page_id else "0"
    args["cThisParent"] = "1" if isinstance(parent, int) and parent == where.parent_id else "0"
    if parent == "OTHER":  # the editor's "other page" choice: the id in cParentIDValue, flags left off
        parent = args.get("cParentIDValue") or None
    args["cParentID"] = parent if parent else 0
    for key in _PAGE_LIST_FLAGS:
        args[key] = flag(args.get(key))
    topic = args.get("topicFilter", "")
    args["filterByRelated"] = "1" if topic == "related" else "0"
    args["filterByCustomTopic"] = "1" if topic == "custom" else "0"
    for key in ("truncateChars", "paginate", "ptID", "pfID"):
        args[key] = int_value(args.get(key))
    args.setdefault("filterDateOption", "all")
    if args["filterByRelated"] == "0":
        args["relatedTopicAttributeKeyHandle"] = ""
    if args["filterByCustomTopic"] == "0" or not str(args.get("customTopicTreeNodeID", "")).isdigit():
        args["customTopicAttributeKeyHandle"] = ""
        args["customTopicTreeNodeID"] = 0
    return args


def _search_save(args: Args, where: Where) -> Args:
    """The search path and results page come from modes (``THIS`` / ``OTHER`` + ``searchUnderCID`` / ``ALL``;
    ``CID`` + ``postTo_cID`` / ``URL`` + ``resultsURL``), not from the columns."""
    out: Args = {
        "title": str(args.get("title") or ""),
        "buttonText": str(args.get("buttonText") or ""),
        "baseSearchPath": "",
        "postTo_cID": "",
        "resultsURL": "",
        "search_all": 0,
        "allow_user_options": 1 if args.get("allowUserOptions") == "ALLOW" else 0,
    }
    mode = args.get("baseSearchPath")
    if mode == "THIS":
        out["baseSearchPath"] = where.page_path(where.page_id) or ""
    elif mode == "OTHER" and int_value(args.get("searchUnderCID")):
        out["baseSearchPath"] = where.page_path(int_value(args.get("searchUnderCID"))) or ""
    elif mode == "ALL":
        out["search_all"] = 1
    if out["baseSearchPath"] == "/":
        out["baseSearchPath"] = ""
    kind = args.get("resultsPageKind")
    target = int_value(args.get("postTo_cID"))
    if kind == "CID" and target and where.page_path(target) is not None:
        out["postTo_cID"] = target
    elif kind == "URL":
        out["resultsURL"] = str(args.get("resultsURL") or "")
    return out


def _autonav_save(args: Args, where: Where) -> Args:
    args["displayPagesIncludeSelf"] = flag(args.get("displayPagesIncludeSelf"))
    args["displayPagesCID"] = args.get("displayPagesCID") or 0
    levels = int_value(args.get("displaySubPageLevelsNum"))
    args["displaySubPageLevelsNum"] = levels if levels > 0 else 0
    args["displayUnavailablePages"] = flag(args.get("displayUnavailablePages"))
    return args


def _date_navigation_save(args: Args, where: Where) -> Args:
    args["cTargetID"] = int_value(args.get("cTargetID")) if flag(args.get("redirectToResults")) == "1" else 0
    args["cParentID"] = int_value(args.get("cParentID")) if flag(args.get("filterByParent")) == "1" else 0
    args["ptID"] = int_value(args.get("ptID"))
    return args


def _top_bar_save(args: Args, where: Where) -> Args:
    out: Args = {
        key: flag(args.get(key))
        for key in (
            "includeNavigation",
            "includeNavigationDropdowns",
            "includeTransparency",
            "includeSearchInput",
            "includeStickyNav",
            "includeSwitchLanguage",
            "ignorePermissions",
        )
    }
    out["includeBrandLogo"] = flag(args.get("includeBrandLogo"))
    out["includeBrandText"] = flag(args.get("includeBrandText"))
    for key in ("brandingText", "brandingLogo", "brandingTransparentLogo", "searchInputFormActionPageID"):
        if key in args:
            out[key] = args[key]
    return out


TYPES = (
    BlockType(
        "autonav",
        (
            ("orderBy", "display_asc"),
            ("displayPages", "top"),
            ("displayPagesCID", "0"),
            ("displayPagesIncludeSelf", "0"),
            ("displaySubPages", "none"),
            ("displaySubPageLevels", "none"),
            ("displaySubPageLevelsNum", "0"),
            ("displayUnavailablePages", "0"),
        ),
        pages=("displayPagesCID",),
        save=_autonav_save,
    ),
    BlockType(
        "breadcrumbs",
        (("includeCurrent", "1"), ("ignoreExcludeNav", "0"), ("ignorePermission", "0")),
        save=lambda args, where: {
            **args,
            **{k: flag(args.get(k)) for k in ("includeCurrent", "ignoreExcludeNav", "ignorePermission")},
        },
    ),
    BlockType(
        "next_previous",
        (
            ("nextLabel", ""),
            ("previousLabel", ""),
            ("parentLabel", ""),
            ("loopSequence", "0"),
            ("orderBy", "display_asc"),
        ),
        save=lambda args, where: {**args, "loopSequence": int_value(args.get("loopSequence"))},
    ),
    BlockType(
        "page_list",
        (
            ("num", "0"),
            ("orderBy", ""),
            ("cParentID", "0"),
            ("cThis", "0"),
            ("cThisParent", "0"),
            ("useButtonForLink", "0"),
            ("buttonLinkText", ""),
            ("pageListTitle", ""),
            ("filterByRelated", "0"),
            ("filterByCustomTopic", "0"),
            ("filterDateOption", "all"),
            ("filterDateDays", "0"),
            ("filterDateStart", ""),
            ("filterDateEnd", ""),
            ("relatedTopicAttributeKeyHandle", ""),
            ("customTopicAttributeKeyHandle", ""),
            ("customTopicTreeNodeID", "0"),
            ("includeName", "1"),
            ("includeDescription", "1"),
            ("includeDate", "0"),
            ("includeAllDescendents", "0"),
            ("paginate", "0"),
            ("displayAliases", "0"),
            ("displaySystemPages", "0"),
            ("ignorePermissions", "0"),
            ("enableExternalFiltering", "0"),
            ("excludeCurrentPage", "0"),
            ("ptID", "0"),
            ("pfID", "0"),
            ("truncateSummaries", "0"),
            ("displayFeaturedOnly", "0"),
            ("noResultsMessage", ""),
            ("displayThumbnail", "0"),
            ("truncateChars", "0"),
            ("titleFormat", "h5"),
        ),
        pages=("cParentID",),
        page_types=("ptID",),
        feeds=("pfID",),
        save=_page_list_save,
        required="num",
    ),
    BlockType(
        "date_navigation",
        (
            ("title", ""),
            ("filterByParent", "0"),
            ("redirectToResults", "0"),
            ("cParentID", "0"),
            ("cTargetID", "0"),
            ("ptID", "0"),
            ("titleFormat", ""),
        ),
        pages=("cParentID", "cTargetID"),
        page_types=("ptID",),
        save=_date_navigation_save,
    ),
    BlockType(
        "search",
        (
            ("title", ""),
            ("buttonText", ""),
            ("baseSearchPath", ""),
            ("search_all", "0"),
            ("allow_user_options", "0"),
            ("postTo_cID", ""),
            ("resultsURL", ""),
        ),
        pages=("postTo_cID",),
        save=_search_save,
    ),
    BlockType(
        "tags",
        (("title", ""), ("targetCID", "0"), ("displayMode", "page"), ("cloudCount", "0"), ("titleFormat", "")),
        pages=("targetCID",),
        # the sandbox's pages carry no tags, and the view shows nothing (not even its title) without any
        render=lambda record, expand, page_name: "\n\n    \n",
    ),
    BlockType(
        "top_navigation_bar",
        (
            ("brandingText", ""),
            ("brandingLogo", "0"),
            ("brandingTransparentLogo", "0"),
            ("includeBrandText", "0"),
            ("includeBrandLogo", "0"),
            ("includeTransparency", "0"),
            ("includeStickyNav", "0"),
            ("includeNavigation", "0"),
            ("includeNavigationDropdowns", "0"),
            ("includeSearchInput", "0"),
            ("searchInputFormActionPageID", ""),
            ("includeSwitchLanguage", "0"),
            ("ignorePermissions", "0"),
        ),
        files=("brandingLogo", "brandingTransparentLogo"),
        save=_top_bar_save,
    ),
    BlockType("topic_list", pages=("cParentID",)),
)
