<?php
// Run with: php concrete/bin/concrete c5:exec install.php HANDLE (from the site directory)
// Installs application/blocks/HANDLE as a block type when it is not installed yet (what the dashboard's
// "Block Types" page does for a block type a site owner copied into application/blocks).
use Concrete\Core\Block\BlockType\BlockType;

$handle = $args[0] ?? 'callout';
if (BlockType::getByHandle($handle) === null) {
    BlockType::installBlockType($handle);
    echo "installed $handle\n";
} else {
    echo "already installed $handle\n";
}

return 0;
