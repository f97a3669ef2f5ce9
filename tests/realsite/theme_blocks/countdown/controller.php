<?php
// A block type as a site owner adds one (application/blocks/countdown): a title and an end date, and a time zone
// its edit form posts but no column keeps, so validate() (run by the API's block update) refuses a value read back
// from the API. Written for cmssync's real-site test of `cmssync probe-block-type` (tests/realsite).
namespace Application\Block\Countdown;

use Concrete\Core\Block\BlockController;

class Controller extends BlockController
{
    protected $btTable = 'btCountdown';
    protected $btName = 'Countdown';
    protected $btDescription = 'The time left until a date.';

    public function validate($args)
    {
        $errors = $this->app->make('helper/validation/error');
        if (empty($args['timezone'])) {
            $errors->add(t('Choose a time zone.'));
        }

        return $errors;
    }
}
