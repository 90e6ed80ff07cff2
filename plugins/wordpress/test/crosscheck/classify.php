<?php
/**
 * Classifies user agents with the plugin's classifier, for the Go test
 * beside this file: reads hex-encoded user agents, one a line, from the
 * file named by the first argument and prints the bot's name, or -, for
 * each.
 *
 * @package StrataAnalytics
 */

define( 'ABSPATH', __DIR__ . '/' );
require dirname( __DIR__, 2 ) . '/includes/class-strata-analytics-bots.php';

$strata_in = fopen( $argv[1], 'rb' );
while ( false !== ( $strata_line = fgets( $strata_in ) ) ) {
	$strata_bot = Strata_Analytics_Bots::classify( (string) hex2bin( rtrim( $strata_line, "\n" ) ) );
	echo $strata_bot ? $strata_bot['name'] : '-', "\n";
}
