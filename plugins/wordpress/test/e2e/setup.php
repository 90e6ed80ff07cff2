<?php
/**
 * Installs the end-to-end test's throwaway WordPress and activates the
 * plugin, from the command line:
 *
 *   php setup.php /path/to/site
 *
 * Prints a JSON object: what activation stored for Track AI bots.
 *
 * @package StrataAnalytics
 */

define( 'WP_INSTALLING', true );
require rtrim( $argv[1], '/' ) . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

// No mail: the machine has no sendmail, and nobody would read it.
add_filter( 'pre_wp_mail', '__return_false' );
$strata_result = wp_install( 'Strata e2e', 'admin', 'admin@example.com', true, '', 'e2e-password' );
if ( is_wp_error( $strata_result ) ) {
	fwrite( STDERR, 'wp_install: ' . $strata_result->get_error_message() . "\n" );
	exit( 1 );
}
switch_theme( 'strata-e2e' );
$strata_activated = activate_plugin( 'strata-analytics/strata-analytics.php' );
if ( is_wp_error( $strata_activated ) ) {
	fwrite( STDERR, 'activate_plugin: ' . $strata_activated->get_error_message() . "\n" );
	exit( 1 );
}
echo wp_json_encode(
	array(
		'trackBots' => get_option( 'strata_analytics_track_bots', 'missing' ),
		'active'    => is_plugin_active( 'strata-analytics/strata-analytics.php' ),
	)
), "\n";
