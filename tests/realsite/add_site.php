<?php
// Run with: concrete/bin/concrete c5:exec /path/to/add_site.php [HANDLE] [key=value ...]   (in the site's directory)
//
// Makes a Concrete 9.3.1 installation a multi-site one and adds a second site, only through Concrete's own services,
// the way the Dashboard does it (nothing of Concrete's code is copied here):
//   System > Permissions > Advanced "Enable"      -> config concrete.permissions.model = advanced (add_site.sh sets it
//                                                    with c5:config before this script runs)
//   System > Multisite > Settings "Enable"         -> Site\InstallationService::validateEnvironment(), enableMultisite()
//   System > Multisite > Types "Add"               -> site/type service add() + the type's theme and home template
//   System > Multisite > Sites "Add"               -> site service add($type, $theme, $handle, $name, 'en_US') + the
//                                                    site's canonical URL and time zone
//   Sitemap "Add page" under the new site's home   -> Page::add() (a page of type `page`, template `full`) and a
//                                                    content block on it (Page::addBlock)
//
// HANDLE: the new site's handle (default: second). Options (key=value):
//   name=Second Site        the site's name
//   canonical_url=          the site's canonical URL (default: none)
//   type=cmssync_type       handle of the site type made for it (reused when it exists)
//   pages=2                 pages added under the new site's home (About, Contact ...), each with a content block
// Idempotent: an existing site or type is reused and nothing else is added. Prints a JSON summary (site id, tree,
// home page id, the pages added).
use Concrete\Core\Block\BlockType\BlockType;
use Concrete\Core\Page\Page;
use Concrete\Core\Page\Template;
use Concrete\Core\Page\Theme\Theme;
use Concrete\Core\Page\Type\Type as PageType;
use Concrete\Core\Site\InstallationService;
use Concrete\Core\Support\Facade\Application;
use Concrete\Core\User\User;

$app = Application::getFacadeApplication();
$handle = $args[0] ?? 'second';
$opt = ['name' => 'Second Site', 'canonical_url' => '', 'type' => 'cmssync_type', 'pages' => '2'];
foreach (array_slice($args, 1) as $a) {
    [$k, $v] = array_pad(explode('=', $a, 2), 2, '');
    if (!array_key_exists($k, $opt)) {
        fwrite(STDERR, "unknown option $k (known: " . implode(', ', array_keys($opt)) . ")\n");
        return 2;
    }
    $opt[$k] = $v;
}
$log = function ($msg) { fwrite(STDERR, "[add-site] $msg\n"); };
User::getByUserID(USER_SUPER_ID, true);
$summary = ['handle' => $handle, 'changed' => false, 'created' => []];
$config = $app->make('config');

if ($config->get('concrete.permissions.model') !== 'advanced') {
    fwrite(STDERR, "advanced permissions are off: run concrete/bin/concrete c5:config set concrete.permissions.model advanced first (add_site.sh does)\n");
    return 1;
}
$installation = $app->make(InstallationService::class);
if (!$installation->isMultisiteEnabled()) {
    $errors = $installation->validateEnvironment();
    if ($errors->has()) {
        fwrite(STDERR, "multisite cannot be enabled: " . implode('; ', $errors->getList()) . "\n");
        return 1;
    }
    $installation->enableMultisite();
    $summary['created'][] = 'multisite';
    $log('multisite enabled');
}

$sites = $app->make('site');
$default = $sites->getDefault();
$theme = Theme::getByID($default->getThemeID()) ?: Theme::getSiteTheme();
$template = Template::getByHandle('full');
$typeService = $app->make('site/type');
$type = $typeService->getByHandle($opt['type']);
if ($type === null) {
    $type = $typeService->add($opt['type'], 'cmssync test type');
    $type->setSiteTypeThemeID($theme->getThemeID());
    $type->setSiteTypeHomePageTemplateID($template->getPageTemplateID());
    $em = $app->make(\Doctrine\ORM\EntityManagerInterface::class);
    $em->persist($type);
    $em->flush();
    $summary['created'][] = 'site type ' . $opt['type'];
    $log("added site type {$opt['type']}");
}

$site = $sites->getByHandle($handle);
if ($site === null) {
    $site = $sites->add($type, $theme, $handle, $opt['name'], 'en_US');
    $siteConfig = $site->getConfigRepository();
    $siteConfig->save('seo.canonical_url', $opt['canonical_url']);
    $siteConfig->save('timezone', $default->getConfigRepository()->get('timezone') ?: 'UTC');
    $app->make('cache/request')->flush();
    $summary['created'][] = 'site';
    $log("added site $handle ({$site->getSiteID()})");
    $home = Page::getByID($site->getSiteHomePageID(), 'RECENT');
    $pageType = PageType::getByHandle('page');
    $content = BlockType::getByHandle('content');
    $names = ['About', 'Contact', 'News', 'Team', 'Jobs'];
    $home->addBlock($content, 'Main', ['content' => "<p>Welcome to {$opt['name']}.</p>"]);
    for ($i = 0; $i < (int) $opt['pages'] && $i < count($names); ++$i) {
        $page = $home->add($pageType, ['cName' => $names[$i]], $template);
        $page->addBlock($content, 'Main', ['content' => "<p>{$names[$i]} of {$opt['name']}.</p>"]);
        $summary['pages'][] = ['id' => (int) $page->getCollectionID(), 'path' => $page->getCollectionPath()];
    }
    $summary['changed'] = true;
}
$summary['site_id'] = (int) $site->getSiteID();
$summary['home_page_id'] = (int) $site->getSiteHomePageID();
$summary['sites'] = array_map(function ($s) {
    return ['id' => (int) $s->getSiteID(), 'handle' => $s->getSiteHandle(), 'home' => (int) $s->getSiteHomePageID()];
}, $sites->getList());
echo json_encode($summary, JSON_UNESCAPED_SLASHES) . "\n";
return 0;
