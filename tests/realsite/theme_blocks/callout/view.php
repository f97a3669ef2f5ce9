<?php defined('C5_EXECUTE') or die('Access Denied.'); ?>
<div class="cmssync-callout">
    <h3><?php echo h($heading); ?></h3>
    <p><?php echo nl2br(h($body)); ?></p>
    <?php if ($buttonText) { ?><span class="btn"><?php echo h($buttonText); ?></span><?php } ?>
</div>
