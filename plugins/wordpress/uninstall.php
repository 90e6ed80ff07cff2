<?php
/**
 * Removes the plugin's options when it is deleted in the admin.
 *
 * @package StrataAnalytics
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

require_once __DIR__ . '/includes/class-strata-analytics-settings.php';

foreach ( Strata_Analytics_Settings::option_names() as $strata_analytics_option ) {
	delete_option( $strata_analytics_option );
}
