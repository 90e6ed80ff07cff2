<?php
/**
 * Sets one of the plugin's options in the end-to-end test's WordPress,
 * through its sanitiser, from the command line:
 *
 *   php set-option.php /path/to/site strata_analytics_host http://127.0.0.1:1
 *
 * @package StrataAnalytics
 */

require rtrim( $argv[1], '/' ) . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/template.php';
Strata_Analytics_Settings::register_settings();
update_option( $argv[2], $argv[3] );
echo wp_json_encode( get_option( $argv[2] ) ), "\n";
