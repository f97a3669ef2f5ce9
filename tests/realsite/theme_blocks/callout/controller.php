<?php
// A block type as a site owner adds one (application/blocks/callout): a heading, a paragraph, a button label and a
// flag, one table. Written for cmssync's real-site test of `cmssync probe-block-type` (tests/realsite).
namespace Application\Block\Callout;

use Concrete\Core\Block\BlockController;

class Controller extends BlockController
{
    protected $btTable = 'btCallout';
    protected $btInterfaceWidth = 500;
    protected $btInterfaceHeight = 400;

    public function getBlockTypeName()
    {
        return t('Callout');
    }

    public function getBlockTypeDescription()
    {
        return t('A heading and a short paragraph in a box.');
    }

    public function save($args)
    {
        $args['showIcon'] = empty($args['showIcon']) ? 0 : 1;
        parent::save($args);
    }
}
