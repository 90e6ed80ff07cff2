<?php
/**
 * Deactivates and uninstalls the plugin in the end-to-end test's WordPress,
 * as deleting it in the admin does, from the command line:
 *
 *   php uninstall.php /path/to/site
 *
 * Prints a JSON object: each of the plugin's options, false when gone.
 *
 * @package StrataAnalytics
 */

require rtrim( $argv[1], '/' ) . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

$strata_plugin = 'strata-analytics/strata-analytics.php';
deactivate_plugins( $strata_plugin );
uninstall_plugin( $strata_plugin );
$strata_options = array();
foreach ( array( 'strata_analytics_api_key', 'strata_analytics_host', 'strata_analytics_track_bots' ) as $strata_option ) {
	$strata_options[ $strata_option ] = get_option( $strata_option );
}
echo wp_json_encode( $strata_options ), "\n";
