<?php
/**
 * Plugin Name:       Strata Analytics
 * Description:       Product analytics with your own Strata server: the browser SDK on every page, and page fetches by AI bots (GPTBot, ClaudeBot, PerplexityBot…), which run no JavaScript, reported by the site's server.
 * Version:           0.3.1
 * Requires at least: 5.6
 * Requires PHP:      7.4
 * Author:            Strata
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       strata-analytics
 *
 * @package StrataAnalytics
 */

defined( 'ABSPATH' ) || exit;

define( 'STRATA_ANALYTICS_VERSION', '0.3.1' );

require_once __DIR__ . '/includes/class-strata-analytics-bots.php';
require_once __DIR__ . '/includes/class-strata-analytics-event.php';
require_once __DIR__ . '/includes/class-strata-analytics-settings.php';
require_once __DIR__ . '/includes/class-strata-analytics-plugin.php';

register_activation_hook( __FILE__, array( 'Strata_Analytics_Settings', 'activate' ) );
Strata_Analytics_Settings::register( plugin_basename( __FILE__ ) );
Strata_Analytics_Plugin::register();
