<?php defined('C5_EXECUTE') or die('Access Denied.'); ?>
<div class="countdown" data-end="<?php echo h($endDate); ?>"><?php echo h($title); ?></div>
